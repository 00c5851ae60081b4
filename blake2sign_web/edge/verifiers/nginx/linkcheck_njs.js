// nginx njs (0.7.9+) handlers checking blake2sign_web signed links and grant cookies before nginx serves a file.
// The snippet that uses them: nginx.conf beside this file.
//
// - `check` (js_content of the auth_request location): answers 204 (allow: nginx serves the file), 403 (refuse),
//   and for what only the origin can check (single use, groups, download names, unknown keys, other methods) 401
//   when $linkcheck_unverifiable is "origin" (the snippet's `error_page 401 = @linkcheck_origin` proxies the
//   request), else 403. An allow answer carries for the main request (auth_request_set): X-Linkcheck-Granted "1"
//   (a grant cookie admitted it), and for a playlist by a folder link in the URL X-Linkcheck-Query (the query its
//   URIs get) and X-Linkcheck-Prefix (the folder, percent-encoded).
// - `headers` (js_header_filter): a granted response made private (Cache-Control: private, Vary: Cookie).
// - `playlistHeaders` (js_header_filter of the playlist location): that, and a 200 playlist to rewrite sent as
//   application/vnd.apple.mpegurl, "private, no-store", without Content-Length, ETag and Accept-Ranges.
// - `playlist` (js_body_filter, buffer_type=buffer, on the playlist location): that playlist's body, buffered to
//   its last chunk, with each URI inside the folder carrying the query. A playlist over 1 MiB is answered 500.
// - `decision` (js_set): "allow", "refuse" or "origin", for a `map` or a log format.
import crypto from 'crypto';
import fs from 'fs';
import linkcheck from '../js/linkcheck.js';

// The main request (an auth_request subrequest sees its request line, Host and Cookie), and its verdict.
function judge(r) {
    var prepared = linkcheck.prepare(fs.readFileSync(r.variables.linkcheck_keyring).toString());
    var request = {
        method: r.variables.request_method,
        target: r.variables.request_uri,
        host: r.headersIn.Host || '',
        scheme: r.variables.scheme,
        cookie: r.headersIn.Cookie || null
    };
    var verdict = linkcheck.decide(prepared, request, Date.now() / 1000, linkcheck.createHmacMac(crypto, prepared));
    return { verdict: verdict, query: linkcheck.playlistRewrite(prepared, verdict, request.target) };
}

function check(r) {
    var judged;
    try {
        judged = judge(r);
    } catch (e) {  // a missing or broken keyring: refuse, and say why in the error log
        r.error('linkcheck: ' + e);
        r.return(403);
        return;
    }
    var v = judged.verdict;
    if (v.decision === 'allow') {
        if (v.granted) r.headersOut['X-Linkcheck-Granted'] = '1';
        if (judged.query !== null) {
            r.headersOut['X-Linkcheck-Query'] = judged.query;
            r.headersOut['X-Linkcheck-Prefix'] = encodeURIComponent(v.prefix);
        }
        r.return(204);
        return;
    }
    r.log('linkcheck: ' + v.decision + ': ' + v.why);
    r.return(v.decision === 'origin' && r.variables.linkcheck_unverifiable === 'origin' ? 401 : 403);
}

var TOO_LARGE = 'This playlist is too large to be sent by a folder link.\n';

// Each request runs in its own VM: these hold the state of this one's playlist between the filters.
var rewriting = false;
var chunks = [];
var size = 0;

function headers(r) {
    if (r.variables.linkcheck_granted === '1') {
        var kept = linkcheck.privateHeaders(r.headersOut['Cache-Control'], r.headersOut['Vary']);
        r.headersOut['Cache-Control'] = kept['Cache-Control'];
        r.headersOut['Vary'] = kept['Vary'];
    }
}

function playlistHeaders(r) {
    headers(r);
    if (!r.variables.linkcheck_query || r.status !== 200) return;
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
        var prefix = decodeURIComponent(r.variables.linkcheck_prefix);
        r.sendBuffer(linkcheck.signPlaylist(text, r.variables.linkcheck_query, path, prefix), flags);
    }
}

function utf8Text(bytes) {
    try {
        return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch (e) {
        return null;
    }
}

function decision(r) {
    try {
        return judge(r).verdict.decision;
    } catch (e) {
        r.error('linkcheck: ' + e);
        return 'refuse';
    }
}

export default { check: check, headers: headers, playlistHeaders: playlistHeaders, playlist: playlist, decision: decision };
