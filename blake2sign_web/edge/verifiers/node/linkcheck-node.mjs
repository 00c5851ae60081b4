// Node (20+) middleware checking blake2sign_web signed links and grant cookies: Express, Connect or a bare
// http.createServer handler. The decision is linkcheck.js's, the same as nginx's and the Python reference's.
//
//   const check = createLinkcheck({ keyring: '/etc/app/keyring.json', unverifiable: 'origin' });
//   app.use('/files', check.middleware, express.static('/srv/files'));
//
// allow: next() (req.linkcheck holds the verdict: its prefix and below for a folder link, granted for a grant
// cookie); refuse: 403; origin (single use, groups, download names, unknown keys, other methods): next() when
// unverifiable is "origin" (the application decides; req.linkcheck.decision says "origin"), else 403.
//
// What the middleware does to the response of an allowed request, before next():
// - granted (a grant cookie admitted it): `Cache-Control: private` (public and s-maxage dropped, no-store kept)
//   and `Vary: Cookie`. Its URL is no secret, so no shared cache may keep the file for others. res.setHeader is
//   wrapped so that a later Cache-Control or Vary (express.static's "public, max-age=0") is made private too; a
//   handler that writes headers some other way (res.writeHead(status, [raw array]), a raw socket) must keep them.
// - a playlist (.m3u8/.m3u) by a folder link in its URL, with `playlists: true` (the default): the handler's 200
//   body is buffered (res.write/res.end wrapped, at most 1 MiB: a larger one is answered 500) and sent with each
//   URI inside the folder carrying the link's query, as `application/vnd.apple.mpegurl`, `private, no-store`,
//   without the file's Content-Length, ETag, Last-Modified and Accept-Ranges. The request's Range and
//   conditional headers are removed first, so the handler sends the whole file (200).
import { readFileSync } from 'node:fs';
import crypto from 'node:crypto';
import core from '../js/linkcheck.js';

const PLAYLIST_TOO_LARGE = 'This playlist is too large to be sent by a folder link.\n';
const FILE_HEADERS = ['Content-Length', 'ETag', 'Last-Modified', 'Accept-Ranges', 'Content-Range'];
const WHOLE_FILE = ['range', 'if-range', 'if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since'];

export function createLinkcheck(options) {
    const unverifiable = options.unverifiable || 'refuse';
    if (unverifiable !== 'origin' && unverifiable !== 'refuse') throw new Error('unverifiable must be "origin" or "refuse"');
    const keyring = typeof options.keyring === 'string' ? readFileSync(options.keyring, 'utf8') : options.keyring;
    const prepared = core.prepare(keyring);
    const mac = core.createHmacMac(crypto, prepared);
    const clock = options.clock || (() => Date.now() / 1000);
    const playlists = options.playlists !== false;

    // The verdict ({decision, prefix, below, granted, why}) on a Node request, a fetch Request (Next.js
    // middleware) or {method, target, host, scheme, cookie}.
    function decide(request) {
        return core.decide(prepared, requestOf(request, options.scheme), clock(), mac);
    }

    function middleware(req, res, next) {
        const request = requestOf(req, options.scheme);
        const verdict = core.decide(prepared, request, clock(), mac);
        req.linkcheck = verdict;
        if (verdict.decision !== 'allow' && !(verdict.decision === 'origin' && unverifiable === 'origin')) {
            res.statusCode = 403;
            res.setHeader('Content-Type', 'text/plain; charset=utf-8');
            res.end('Forbidden\n');
            return;
        }
        if (verdict.granted) keepPrivate(res);
        const query = playlists ? core.playlistRewrite(prepared, verdict, request.target) : null;
        if (query !== null) {
            WHOLE_FILE.forEach((name) => { delete req.headers[name]; });
            rewritePlaylist(req, res, query, request.target.split('?')[0], verdict.prefix);
        }
        next();
    }

    return { decide, middleware };
}

export default function linkcheck(options) {
    return createLinkcheck(options).middleware;
}

// Makes the response private now, and every Cache-Control or Vary set on it later.
function keepPrivate(res) {
    const setHeader = res.setHeader;
    res.setHeader = function (name, value) {
        const lower = String(name).toLowerCase();
        if (lower === 'cache-control') value = core.privateHeaders(value, null)['Cache-Control'];
        else if (lower === 'vary') value = core.privateHeaders(null, value).Vary;
        return setHeader.call(this, name, value);
    };
    const headers = core.privateHeaders(res.getHeader('cache-control'), res.getHeader('vary'));
    Object.keys(headers).forEach((name) => setHeader.call(res, name, headers[name]));
}

// Buffers the handler's response, then sends a 200 one rewritten (signPlaylist) and any other as it came.
function rewritePlaylist(req, res, query, path, prefix) {
    const write = res.write, end = res.end, writeHead = res.writeHead;
    const chunks = [];
    let size = 0;
    function collect(chunk, encoding) {
        const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8');
        size += bytes.length;
        if (size <= core.MAX_PLAYLIST_SIZE) chunks.push(bytes);
    }
    res.writeHead = function (status, reason, headers) {  // headers wait for the body: they change with it
        if (typeof reason !== 'string') headers = reason;
        else res.statusMessage = reason;
        res.statusCode = status;
        if (headers && !Array.isArray(headers)) Object.keys(headers).forEach((name) => res.setHeader(name, headers[name]));
        return res;
    };
    res.write = function (chunk, encoding, callback) {
        collect(chunk, encoding);
        const done = typeof encoding === 'function' ? encoding : callback;
        if (done) process.nextTick(done);
        return true;
    };
    res.end = function (chunk, encoding, callback) {
        if (typeof chunk === 'function') callback = chunk, chunk = null;
        else if (typeof encoding === 'function') callback = encoding, encoding = null;
        if (chunk) collect(chunk, encoding);
        res.write = write;
        res.end = end;
        res.writeHead = writeHead;
        let body = Buffer.concat(chunks);
        if (res.statusCode === 200) {
            FILE_HEADERS.forEach((name) => res.removeHeader(name));
            if (size > core.MAX_PLAYLIST_SIZE) {
                res.statusCode = 500;
                res.setHeader('Content-Type', 'text/plain; charset=utf-8');
                res.setHeader('Cache-Control', 'no-store');
                body = Buffer.from(PLAYLIST_TOO_LARGE);
            } else {
                const text = utf8Text(body);  // null: not UTF-8, so no playlist: sent as it is
                if (text !== null) {
                    body = Buffer.from(core.signPlaylist(text, query, path, prefix), 'utf8');
                    Object.keys(core.REWRITTEN_HEADERS).forEach((name) => res.setHeader(name, core.REWRITTEN_HEADERS[name]));
                }
            }
            if (req.method !== 'HEAD') res.setHeader('Content-Length', body.length);
        }
        return end.call(res, req.method === 'HEAD' ? undefined : body, callback);
    };
}

function utf8Text(bytes) {
    try {
        return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch (e) {
        return null;
    }
}

function requestOf(request, scheme) {
    if (typeof request.target === 'string') return request;
    if (request.headers && typeof request.headers.get === 'function') {  // a fetch Request: its URL is parsed
        const url = new URL(request.url);
        return {
            method: request.method,
            target: url.pathname + url.search,
            host: request.headers.get('host') || url.host,
            scheme: scheme || url.protocol.slice(0, -1),
            cookie: request.headers.get('cookie')
        };
    }
    return {  // node:http's IncomingMessage: req.url is the request target as sent
        method: request.method,
        target: request.originalUrl || request.url,
        host: request.headers.host || '',
        scheme: scheme || (request.socket && request.socket.encrypted ? 'https' : 'http'),
        cookie: request.headers.cookie === undefined ? null : request.headers.cookie
    };
}
