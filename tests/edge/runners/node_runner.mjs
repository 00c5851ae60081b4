// Prints the Node verifier's answers on a cases file (argv[2], the vectors' schema), one JSON line each, in order:
// {"decision", "prefix", "below", "granted"} per vector; with --playlists, {"query"} per "playlist_queries" case
// then {"text"} per "playlists" case. With --webcrypto, the MAC is WebCrypto's (async, as Cloudflare Workers
// compute it) instead of node:crypto's createHmac.
import { readFileSync } from 'node:fs';
import crypto from 'node:crypto';
import linkcheck from '../../../blake2sign_web/edge/verifiers/js/linkcheck.js';

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const webcrypto = process.argv.includes('--webcrypto');

function webcryptoMac(prepared) {
    const keys = prepared.keys.map((k) =>
        crypto.subtle.importKey('raw', k.key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']));
    return async (index, text) => crypto.subtle.sign('HMAC', await keys[index], text);
}

const rings = {};
for (const [name, keyring] of Object.entries(cases.keyrings)) {
    const prepared = linkcheck.prepare(keyring);
    rings[name] = { prepared, mac: webcrypto ? webcryptoMac(prepared) : linkcheck.createHmacMac(crypto, prepared) };
}
const out = [];
if (process.argv.includes('--playlists')) {
    for (const c of cases.playlist_queries) {
        out.push(JSON.stringify({ query: linkcheck.playlistQuery(rings[c.keyring].prepared, c.target) }));
    }
    for (const c of cases.playlists) {
        out.push(JSON.stringify({ text: linkcheck.signPlaylist(c.text, c.query, c.path, c.prefix) }));
    }
} else {
    for (const vector of cases.vectors) {
        const ring = rings[vector.keyring];
        const v = await linkcheck.decide(ring.prepared, vector.request, vector.now, ring.mac);
        out.push(JSON.stringify({ decision: v.decision, prefix: v.prefix, below: v.below, granted: v.granted }));
    }
}
process.stdout.write(out.join('\n') + '\n');
