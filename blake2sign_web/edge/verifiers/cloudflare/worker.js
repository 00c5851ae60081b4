// A Cloudflare Worker that checks blake2sign_web's signed links and grant cookies in front of the files.
//
// env.KEYRING (a secret): the keyring's JSON text (`python -m blake2sign_web.edge keyring`).
// env.FILES: where an allowed request's file is fetched (a service binding; without one, the global fetch of the
// request's URL), the link's own parameters removed from the query, so that a cache keys the file by its path.
// env.ORIGIN: where a request only the application can decide goes, unchanged (a service binding; without one,
// the global fetch) when env.UNVERIFIABLE is "origin"; otherwise ("refuse", the default) they get 403. Forward them
// only to a server that verifies links itself: a static origin would serve a forged link's file.
// The decision is linkcheck.js's (docs/link-format.md, "Deciding"); see README.md here. `python -m blake2sign_web.edge
// cloudflare --out DIR` writes this file next to linkcheck.js (in the package: ../js/linkcheck.js).
import linkcheck from './linkcheck.js';

const NOT_PASSED_ON = ['content-length', 'etag', 'last-modified', 'accept-ranges', 'content-range'];
const CONDITIONS = ['range', 'if-range', 'if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since'];

let loaded = null; // {text, prepared, mac}: the keyring read once per isolate, and its keys imported once

function keyring(env) {
    if (!env.KEYRING) throw new Error('no keyring: wrangler secret put KEYRING < keyring.json');
    const text = typeof env.KEYRING === 'string' ? env.KEYRING : JSON.stringify(env.KEYRING);
    if (!loaded || loaded.text !== text) {
        const prepared = linkcheck.prepare(text);
        const keys = prepared.keys.map((k) =>
            crypto.subtle.importKey('raw', k.key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']));
        const mac = async (index, bytes) => crypto.subtle.sign('HMAC', await keys[index], bytes);
        loaded = { text, prepared, mac };
    }
    return loaded;
}

// The request target (path and query) exactly as received: workerd's request.url is scheme://Host + the raw target,
// whatever the Host header holds.
function target(url, scheme, host) {
    const head = `${scheme}://${host}`;
    if (host && url.startsWith(head) && url.charAt(head.length) === '/') return url.slice(head.length);
    const start = url.indexOf('/', url.indexOf('://') + 3);
    return start < 0 ? '/' : url.slice(start);
}

function decodedName(field) {
    const name = field.split('=', 1)[0].replace(/\+/g, ' ');
    try {
        return decodeURIComponent(name);
    } catch (error) {
        return name;
    }
}

// The target without the link's own parameters (signature, kid, expires, ...); the application's are kept as sent.
function fileTarget(raw, names) {
    const [head, query = null] = raw.split(/\?(.*)/s, 2);
    if (query === null) return raw;
    const own = new Set(Object.values(names)); // every parameter name of the keyring is the link's own
    const kept = query.split('&').filter((field) => field && !own.has(decodedName(field)));
    return kept.length ? `${head}?${kept.join('&')}` : head;
}

function forbidden() {
    return new Response('Forbidden\n', { status: 403, headers: { 'content-type': 'text/plain; charset=utf-8' } });
}

async function serveFile(request, env, scheme, host, raw, verdict, prepared, playlistQuery) {
    // the Host headers the file's request is sent with: linkcheck.js's rule for a host-bound link
    if (!linkcheck.HOST.test(host)) return new Response('Bad Request\n', { status: 400 });
    const headers = new Headers(request.headers);
    headers.delete('cookie'); // the files are the same for everyone: no cookie reaches their server or its cache
    if (playlistQuery !== null) CONDITIONS.forEach((h) => headers.delete(h)); // the whole playlist, to rewrite
    const method = playlistQuery !== null ? 'GET' : request.method;
    const upstream = new Request(`${scheme}://${host}${fileTarget(raw, prepared.names)}`, { method, headers });
    const response = await (env.FILES ? env.FILES.fetch(upstream) : fetch(upstream));
    if (playlistQuery !== null && response.status === 200) {
        const body = await response.arrayBuffer();
        if (body.byteLength > linkcheck.MAX_PLAYLIST_SIZE) { // links/playlists.py TOO_LARGE
            return new Response('This playlist is too large to be sent by a folder link.\n', { status: 500 });
        }
        const path = raw.split('?', 1)[0];
        const text = linkcheck.signPlaylist(new TextDecoder().decode(body), playlistQuery, path, verdict.prefix);
        const rewritten = new Headers(response.headers);
        NOT_PASSED_ON.forEach((h) => rewritten.delete(h));
        // application/vnd.apple.mpegurl, and private, no-store: it carries a signature, so no cache keeps it
        Object.entries(linkcheck.REWRITTEN_HEADERS).forEach(([name, value]) => rewritten.set(name, value));
        return new Response(request.method === 'HEAD' ? null : text, { status: 200, headers: rewritten });
    }
    if (!verdict.granted) return response;
    // links/grants.py `private`: a response to a request admitted by a grant cookie is no shared cache's to keep
    const passed = new Response(response.body, response);
    const cached = linkcheck.privateHeaders(passed.headers.get('cache-control'), passed.headers.get('vary'));
    Object.entries(cached).forEach(([name, value]) => passed.headers.set(name, value));
    return passed;
}

export default {
    async fetch(request, env, ctx) {
        const { prepared, mac } = keyring(env);
        const scheme = request.url.slice(0, request.url.indexOf('://'));
        const host = request.headers.get('host') || new URL(request.url).host; // a Request built without one
        const raw = target(request.url, scheme, host);
        const verdict = await linkcheck.decide(prepared, {
            method: request.method, target: raw, host, scheme, cookie: request.headers.get('cookie'),
        }, Date.now() / 1000, mac); // seconds with their fraction, as the reference's clock
        if (verdict.decision === 'allow') {
            // a playlist by a folder link in its URL: its URIs get the link (docs/link-format.md, "Playlists")
            const rewrite = linkcheck.playlistRewrite(prepared, verdict, raw);
            return serveFile(request, env, scheme, host, raw, verdict, prepared, rewrite);
        }
        if (verdict.decision === 'origin' && env.UNVERIFIABLE === 'origin') {
            return env.ORIGIN ? env.ORIGIN.fetch(request) : fetch(request);
        }
        return forbidden();
    },
};
