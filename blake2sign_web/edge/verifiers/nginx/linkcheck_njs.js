// nginx njs (0.7.9+) handlers checking blake2sign_web signed links and grant cookies before nginx serves a file.
// The snippet that uses them: nginx.conf beside this file. The keyring is its `js_preload_object linkcheck_keyring`
// (read when nginx loads its configuration: reload nginx after changing it).
//
// - `verdict` (js_set $linkcheck_verdict, read once by the location's `set $linkcheck ...`): "allow" (nginx serves
//   the file), "refuse" (the snippet answers 403), and for what only the origin can check (single use, groups,
//   download names, unknown keys, other methods) "origin" when $linkcheck_unverifiable is "origin" (the snippet
//   answers 401, which its `error_page 401 = @linkcheck_origin` turns into a proxied request), else "refuse". Why a
//   request is refused or sent to the origin goes to the error log (info).
// - `headers` (js_header_filter): a response to a request a grant cookie admitted made private (Cache-Control:
//   private, Vary: Cookie).
// - `playlistHeaders` (js_header_filter of the playlist location): that, and a 200 playlist fetched by a folder link
//   in its URL sent as application/vnd.apple.mpegurl, "private, no-store", without Content-Length, ETag and
//   Accept-Ranges.
// - `playlist` (js_body_filter, buffer_type=buffer, on the playlist location): that playlist's body, buffered to
//   its last chunk, with each URI inside the folder carrying the link's query. One over 1 MiB is answered 500.
// - `decision` (js_set): the verdict's own "allow", "refuse" or "origin", for a `map` or a log format.
//
// Cost: njs 0.7.9 gives every request a fresh VM and runs the modules' top level in it again, so nothing is built
// there (here or in linkcheck.js). The check runs in the request itself (js_set, no auth_request subrequest), and
// its filters find its verdict in the same VM: one VM per request.
import crypto from 'crypto';
import linkcheck from '../js/linkcheck.js';

// This request's {verdict, prepared, target, query} once judged (each request has its own VM: nothing is shared
// between requests). `query`: see rewriteQuery (undefined until asked).
var judged = null;

// The main request's verdict (and what rewriteQuery needs).
function judge(r) {
    if (judged !== null) return judged;
    var prepared = linkcheck.prepare(linkcheck_keyring);  // the snippet's js_preload_object
    var request = {  // (the Host header and the scheme only for a host-bound keyring: each read costs)
        method: r.method,
        target: r.variables.request_uri,
        host: prepared.bindHost ? r.headersIn.Host || '' : '',
        scheme: prepared.bindHost ? r.variables.scheme : '',
        cookie: r.headersIn.Cookie || null
    };
    var v = linkcheck.decide(prepared, request, Date.now() / 1000, linkcheck.createHmacMac(crypto, prepared));
    judged = { verdict: v, prepared: prepared, target: request.target, query: undefined };
    return judged;
}

function verdict(r) {
    var v;
    try {
        v = judge(r).verdict;
    } catch (e) {  // a broken keyring: refuse, and say why in the error log
        r.error('linkcheck: ' + e);
        return 'refuse';
    }
    if (v.decision === 'allow') return 'allow';
    r.log('linkcheck: ' + v.decision + ': ' + v.why);
    return v.decision === 'origin' && r.variables.linkcheck_unverifiable === 'origin' ? 'origin' : 'refuse';
}

function decision(r) {
    try {
        return judge(r).verdict.decision;
    } catch (e) {
        r.error('linkcheck: ' + e);
        return 'refuse';
    }
}

var TOO_LARGE = 'This playlist is too large to be sent by a folder link.\n';

// The state of this request's playlist between the filters.
var rewriting = false;
var chunks = [];
var size = 0;

// What the filters know of the request's verdict, judged by its js_set in this same VM (none: nothing to change).
function granted() {
    return judged !== null && judged.verdict.decision === 'allow' && judged.verdict.granted;
}

// The query an allowed playlist's URIs get, or null; worked out on the playlist location only (a segment's request,
// the usual one, needs none).
function rewriteQuery() {
    if (judged === null || judged.verdict.decision !== 'allow') return null;
    if (judged.query === undefined) {
        judged.query = linkcheck.playlistRewrite(judged.prepared, judged.verdict, judged.target);
    }
    return judged.query;
}

function headers(r) {
    if (granted()) {
        var kept = linkcheck.privateHeaders(r.headersOut['Cache-Control'], r.headersOut['Vary']);
        r.headersOut['Cache-Control'] = kept['Cache-Control'];
        r.headersOut['Vary'] = kept['Vary'];
    }
}

function playlistHeaders(r) {
    headers(r);
    if (rewriteQuery() === null || r.status !== 200) return;
    rewriting = true;
    var tooLarge = Number(r.headersOut['Content-Length']) > linkcheck.MAX_PLAYLIST_SIZE;
    ['Content-Length', 'ETag', 'Last-Modified', 'Accept-Ranges'].forEach(function (name) { delete r.headersOut[name]; });
    var sent = tooLarge ? { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' } : linkcheck.REWRITTEN_HEADERS;
    Object.keys(sent).forEach(function (name) { r.headersOut[name] = sent[name]; });
    if (tooLarge) r.status = 500;
}

function playlist(r, data, flags) {
    if (!rewriting) {
        r.sendBuffer(data, flags);
        return;
    }
    size += data.length;
    if (size <= linkcheck.MAX_PLAYLIST_SIZE) chunks.push(data);
    if (!flags.last) return;
    var text = size <= linkcheck.MAX_PLAYLIST_SIZE ? utf8Text(Buffer.concat(chunks)) : null;
    if (r.status === 500) {
        r.sendBuffer(TOO_LARGE, flags);
    } else if (text === null) {  // (a file of no known length over 1 MiB, or not UTF-8: no playlist to send)
        r.error('linkcheck: a playlist over ' + linkcheck.MAX_PLAYLIST_SIZE + ' bytes or not UTF-8: not sent');
        r.sendBuffer('#EXTM3U\n# ' + TOO_LARGE, flags);
    } else {
        var path = r.variables.request_uri.split('?')[0];
        r.sendBuffer(linkcheck.signPlaylist(text, rewriteQuery(), path, judged.verdict.prefix), flags);
    }
}

function utf8Text(bytes) {
    try {
        return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch (e) {
        return null;
    }
}

export default { verdict: verdict, headers: headers, playlistHeaders: playlistHeaders, playlist: playlist, decision: decision };
