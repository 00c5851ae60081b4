// A test Worker for workerd: POST a cases file (the vectors' schema) to it and it answers one JSON line per vector,
// {"decision", "prefix", "below", "granted"}, decided by linkcheck.js with WebCrypto's HMAC as the Cloudflare
// Worker computes it. POST to /playlists instead: one line {"query"} per "playlist_queries" case, then one line
// {"text"} per "playlists" case.
import linkcheck from '../../../blake2sign_web/edge/verifiers/js/linkcheck.js';

function webcryptoMac(prepared) {
    const keys = prepared.keys.map((k) =>
        crypto.subtle.importKey('raw', k.key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']));
    return async (index, text) => crypto.subtle.sign('HMAC', await keys[index], text);
}

async function decisions(cases) {
    const rings = {};
    for (const [name, keyring] of Object.entries(cases.keyrings)) {
        const prepared = linkcheck.prepare(keyring);
        rings[name] = { prepared, mac: webcryptoMac(prepared) };
    }
    const out = [];
    for (const vector of cases.vectors) {
        const ring = rings[vector.keyring];
        const v = await linkcheck.decide(ring.prepared, vector.request, vector.now, ring.mac);
        out.push(JSON.stringify({ decision: v.decision, prefix: v.prefix, below: v.below, granted: v.granted }));
    }
    return out;
}

function playlists(cases) {
    const out = [];
    for (const c of cases.playlist_queries || []) {
        const prepared = linkcheck.prepare(cases.keyrings[c.keyring]);
        out.push(JSON.stringify({ query: linkcheck.playlistQuery(prepared, c.target) }));
    }
    for (const c of cases.playlists || []) {
        out.push(JSON.stringify({ text: linkcheck.signPlaylist(c.text, c.query, c.path, c.prefix) }));
    }
    return out;
}

export default {
    async fetch(request) {
        if (request.method !== 'POST') return new Response('POST a cases file\n', { status: 405 });
        const cases = await request.json();
        try {
            const lines = new URL(request.url).pathname === '/playlists' ? playlists(cases) : await decisions(cases);
            return new Response(lines.join('\n') + '\n', { headers: { 'content-type': 'application/x-ndjson' } });
        } catch (error) {
            return new Response(String(error && error.stack || error) + '\n', { status: 500 });
        }
    },
};
