// The edge verifier of blake2sign_web's signed links and grant cookies, for Node, nginx njs 0.7.9 and workerd.
//
// It decides as blake2sign_web/edge/reference.py does (the vectors and the differential fuzz hold it to that):
// "allow" (serve the file), "refuse" (403) or "origin" (what only the origin can check). The contract:
// docs/link-format.md, "Deciding" and "Playlists". Written in the subset of JavaScript that njs 0.7.9 runs: no
// destructuring, for..of, classes, Map, default parameters or RegExp "u" flag; and njs strings cannot hold a lone
// surrogate, so a decoded query name or value is an array of code points (Python's surrogateescape: byte b ->
// 0xDC00 + b).
//
// The default export:
// - `prepare(keyring)` reads a keyring (its JSON text or parsed object) once.
// - `decide(prepared, request, now, mac)`: the verdict {decision, prefix, below, granted, why} on request
//   {method, target, host, scheme, cookie} at `now` (Unix seconds). `granted`: a grant cookie admitted it (its
//   response must be private: `privateHeaders`). The HMAC-SHA-256 is the caller's: `mac(keyIndex, textBytes)`
//   returns the tag's bytes (or its base64url text), or a Promise of them (WebCrypto: `decide` then returns a
//   Promise too);
//   `createHmacMac(crypto, prepared)` makes the sync one of Node's and njs's `crypto` module.
// - `playlistQuery(prepared, target)`: the query an allowed folder link's playlist passes on to its URIs (null:
//   no signature in the URL); `signPlaylist(text, query, playlistPath, prefix)`: the playlist with it.
// - What every wrapper does alike: `playlistRewrite(prepared, verdict, target)` (the query to rewrite a 200
//   response with, or null), `isPlaylist(path)`, `privateHeaders(cacheControl, vary)`, `REWRITTEN_HEADERS`,
//   `MAX_PLAYLIST_SIZE` and `HOST` (the Host headers a host-bound link is checked against).

var MAC_LENGTH = 43;
var CLOCK_SKEW = 60;
var MAX_URL_LENGTH = 8192;
var GRANT = 'b2s_grant_';
var MAX_VALUE_LENGTH = 600;
var MAX_DEPTH = 16;
var GRANT_VALUE = /^[A-Za-z0-9._~%&:-]+$/;
var NONCE = /^[A-Za-z0-9_-]{16,64}$/;
var GROUP_ID = /^[A-Za-z0-9_.-]{1,64}$/;
var ISSUED = /^[0-9]{1,16}$/;
var TIME = /^[0-9]{1,10}$/;
var ASCII = /^[\x00-\x7f]*$/;
// The Host header a host-bound link is checked against (reference.py HOST): a name or IPv4 address, or an IPv6
// one in brackets, and a port. With it, "scheme://" + host + target splits as simply as a path.
var HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;
var PLAIN_PATH = /^[A-Za-z0-9\/!$&'()*+,;=:@._~-]*$/;
var CONTROL_CHARACTER = /[\x00-\x1f\x7f-\x9f]/;
var PATH_SAFE = "/!$&'()*+,;=:@-._~";
var QUERY_SAFE = '-._~';
var DEFAULT_PORTS = { http: ':80', https: ':443' };

// ---- The keyring ----

function prepare(keyring) {
    if (typeof keyring === 'string') keyring = JSON.parse(keyring);
    if (!keyring || keyring.keyring !== 1 || keyring.algorithm !== 'hmac-sha256') {
        throw new Error('not a keyring of version 1 for hmac-sha256');
    }
    // (index loops: an array of nginx's js_preload_object has no Array methods in njs 0.7.9)
    var list = keyring.keys, patterns = keyring.ignore, keys = [], ignore = [], i, one;  // (njs: each read costs)
    for (i = 0; i < list.length; i++) {
        one = list[i];
        keys.push({ id: String(one.id), key: base64urlDecode(one.key) });
    }
    for (i = 0; patterns && i < patterns.length; i++) ignore.push(codePoints(patterns[i]));
    for (i = 0; i < keys.length; i++) if (keys[i].key.length !== 32) keys = [];
    if (!keys.length) throw new Error('a keyring needs at least one key, each 32 bytes');
    var given = keyring.parameters || {};  // the query parameters' names, the keyring's or the default ones
    // (the keyring's own object when it names all eleven and nothing else, as keyring.py writes it: njs builds none)
    var names = given.signature && given.expires && given.nonce && given.consume && given.disposition &&
        given.filename && given.starts && given.prefix && given.group && given.issued && given.key_id &&
        Object.keys(given).length === 11 ? given : {
        signature: given.signature || 'signature', expires: given.expires || 'expires', nonce: given.nonce || 'once',
        consume: given.consume || 'consume', disposition: given.disposition || 'disposition',
        filename: given.filename || 'filename', starts: given.starts || 'starts', prefix: given.prefix || 'prefix',
        group: given.group || 'group', issued: given.issued || 'issued', key_id: given.key_id || 'kid'
    };
    return {
        keys: keys,
        names: names,
        ignore: ignore,
        bindHost: !!keyring.bind_host,
        maxUrlLength: keyring.max_url_length || MAX_URL_LENGTH
    };
}

// A sync `mac` from Node's or njs's crypto module.
function createHmacMac(crypto, prepared) {
    return function (index, text) {
        return crypto.createHmac('sha256', prepared.keys[index].key).update(text).digest('base64url');
    };
}

// ---- Deciding (edge/reference.py decide) ----

function verdict(decision, why, link, granted) {
    return {
        decision: decision,
        prefix: link ? link.prefix : null,
        below: link ? link.below : null,
        granted: !!granted,
        why: why
    };
}

// Thrown by the checks below; `attempt` turns it back into a verdict.
function stop(decision, why) {
    throw verdict(decision, why);
}

function attempt(step) {
    try {
        return step();
    } catch (e) {
        if (e && e.decision) return e;
        throw e;
    }
}

// The verdict on `request` ({method, target, host, scheme, cookie}) at `now` (Unix seconds): a verdict, or a
// Promise of one when `mac` returns Promises.
function decide(prepared, request, now, mac) {
    var step = checkBeforeMac(prepared, request, now);
    if (!step.pending) return step;
    return tryKeys(step.pending, mac, 0, step.finish);
}

function tryKeys(pending, mac, i, finish) {
    if (i === pending.keys.length) return finish(false);
    var tag = mac(pending.keys[i], pending.text);
    if (typeof tag === 'string') {  // (njs: no look-up of "then" on a string)
        return sameText(tag, pending.signature) ? finish(true) : tryKeys(pending, mac, i + 1, finish);
    }
    if (tag && typeof tag.then === 'function') {
        return tag.then(function (bytes) {
            return sameText(tagText(bytes), pending.signature) ? finish(true) : tryKeys(pending, mac, i + 1, finish);
        });
    }
    return sameText(tagText(tag), pending.signature) ? finish(true) : tryKeys(pending, mac, i + 1, finish);
}

function tagText(tag) {
    return typeof tag === 'string' ? tag : base64url(tag);
}

// The checks before the MAC: a final verdict, or {pending: {keys, text, signature}, finish(matched)} where
// `keys` are the indexes of the keys to try in order, `text` the bytes their MAC covers, `signature` the link's
// tag (code points), and `finish` the verdict once `decide` knows whether one of the keys made the tag.
function checkBeforeMac(prepared, request, now) {
    if (request.method !== 'GET' && request.method !== 'HEAD') return verdict('origin', 'a method other than GET or HEAD');
    var target = request.target;
    var usual = USUAL_TARGET.test(target);  // (an ASCII path too: njs, one regular expression for the usual request)
    if (!usual && (target.charAt(0) !== '/' || !ASCII.test(target))) {
        return verdict('refuse', 'a request target that is not an ASCII path');
    }
    var host = request.host || '', scheme = request.scheme;
    if (prepared.bindHost && (!HOST.test(host) || (scheme !== 'http' && scheme !== 'https'))) {
        return verdict('refuse', 'a malformed Host header or scheme');
    }
    var url = prepared.bindHost ? scheme + '://' + host + target : target;
    return attempt(function () {
        var cookie = grantCookieFor(prepared, url, request.cookie);
        var link = cookie === null ? verifyLink(prepared, url, now, usual) : verifyGrant(prepared, url, cookie, now, usual);
        return {
            pending: link.pending,
            finish: function (matched) {
                return attempt(function () {
                    if (!matched) stop('origin', 'signature does not match: not signed by a key of this keyring');
                    return decideVerifiedLink(link.after(), target, cookie !== null, usual);
                });
            }
        };
    });
}

// After the MAC and the link's own checks: what only the origin can decide, then the path of a one-file link
// (`usual`: the target is USUAL_TARGET's, whose path has no problem).
function decideVerifiedLink(link, target, granted, usual) {
    if (link.nonce !== null || link.group !== null || link.disposition !== null) {
        return verdict('origin', 'single use, a group or a download name: the origin decides');
    }
    if (link.prefix === null && !usual) {
        var problem = pathProblem(partition(target, '?')[0]);
        if (problem !== null) return verdict('refuse', 'unsafe path: ' + problem);
    }
    return verdict('allow', 'valid', link, granted);
}

// ---- Grant cookies (links/grants.py) ----

// The grant cookie's value to verify the request by, or null to verify its URL.
function grantCookieFor(prepared, url, header) {
    if (!header || header.indexOf(GRANT) < 0) return null;  // (no cookie named as a grant)
    var parts = partition(url, '?');
    if (parts[2] && ('&' + parts[2]).indexOf('&' + prepared.names.signature + '=') >= 0) return null;
    var cookies = parseCookies(header), grants = [];
    for (var c = 0; c < cookies.length; c++) {  // named GRANT..., __Secure-GRANT... or __Host-GRANT...
        var name = cookies[c][0], at = name.indexOf(GRANT);
        if (at === 0 || (at === 9 && name.slice(0, 9) === '__Secure-') || (at === 7 && name.slice(0, 7) === '__Host-')) {
            grants.push(cookies[c]);
        }
    }
    if (grants.length <= 1) return grants.length ? grants[0][1] : null;
    var named = {};  // by the name without "__Secure-" or "__Host-": the later cookie wins, as a Python dict
    grants.forEach(function (c) { named['=' + c[0].slice(c[0].indexOf(GRANT))] = c[1]; });
    var path = canonicalPath(pathOf(parts[0]));
    var ends = [];  // where the folders a grant can name end: "/" down to MAX_DEPTH segments
    for (var end = path.indexOf('/'); end >= 0 && ends.length <= MAX_DEPTH; end = path.indexOf('/', end + 1)) {
        ends.push(end);
    }
    for (var i = ends.length - 1; i >= 0; i--) {
        var value = named['=' + grantName(path.slice(0, ends[i] + 1))];
        if (value !== undefined) return value;
    }
    return null;
}

// The Cookie header's [name, value] pairs, the last of a name kept (in its first place, as a Python dict).
function parseCookies(header) {
    var pairs = [], at = {}, parts = (header || '').split(';');
    for (var i = 0; i < parts.length; i++) {
        var part = parts[i], eq = part.indexOf('=');
        if (eq < 0) continue;
        var name = stripSpaces(part.slice(0, eq)), value = stripSpaces(part.slice(eq + 1));
        if (at['=' + name] === undefined) {
            at['=' + name] = pairs.length;
            pairs.push([name, value]);
        } else {
            pairs[at['=' + name]][1] = value;
        }
    }
    return pairs;
}

function stripSpaces(text) {
    var first = text.charAt(0), last = text.charAt(text.length - 1);
    if (first !== ' ' && first !== '\t' && last !== ' ' && last !== '\t') return text;  // (njs: a replace is slow)
    var second = text.charAt(1);  // (the usual one: "; " before a cookie's name)
    if (first === ' ' && second !== ' ' && second !== '\t' && last !== ' ' && last !== '\t') return text.slice(1);
    return text.replace(/^[ \t]+|[ \t]+$/g, '');
}

// The cookie name of a folder: 4 bytes of its SHA-256 in hex (what HMAC-SHA-256 signers name it by).
function grantName(prefix) {
    var digest = sha256(utf8(prefix)), hex = '';
    for (var i = 0; i < 4; i++) hex += (digest[i] < 16 ? '0' : '') + digest[i].toString(16);
    return GRANT + hex;
}

// The path of a URL without its query: the URL itself, or what follows "scheme://host".
function pathOf(head) {
    if (head.charAt(0) === '/') return head;
    var start = head.indexOf('/', head.indexOf('://') + 3);
    return start >= 0 ? head.slice(start) : '/';
}

// The URL with the cookie's query added, verified as a folder link.
function verifyGrant(prepared, url, value, now, usual) {
    if (value.length > MAX_VALUE_LENGTH) stop('refuse', 'malformed grant cookie');
    var inCanonicalForm = usual && USUAL_GRANT.test(value);  // (then GRANT_VALUE's too)
    if (!inCanonicalForm && !GRANT_VALUE.test(value)) stop('refuse', 'malformed grant cookie');
    var parts = partition(url, '?');
    var granted = value.split(':').join('=');
    var link = verifyLink(prepared, parts[2] ? parts[0] + '?' + parts[2] + '&' + granted : parts[0] + '?' + granted, now,
        inCanonicalForm);
    return {
        pending: link.pending,
        after: function () {
            var checked = link.after();
            if (checked.prefix === null) stop('refuse', 'grant cookie is not a folder link');
            return checked;
        }
    };
}

// ---- The link (links/signer.py URLSigner.verify_link) ----

// {pending, after()}: the MAC to check, then the link's own checks (after() throws a verdict or returns the link).
// `url` is ASCII: the target, "scheme://" + a checked Host + the target, and a grant cookie's value.
function verifyLink(prepared, url, now, inCanonicalForm) {
    var fast = inCanonicalForm ? canonicalLink(prepared, url, now) : null;
    if (fast === null) fast = usualLink(prepared, url, now);
    if (fast !== null) return fast;
    var names = prepared.names;
    if (url.length > prepared.maxUrlLength) stop('refuse', 'URL too long');
    var parts = split(url);
    var signatures = [], pairs = [];
    parseQuery(parts.query).forEach(function (pair) {
        if (same(pair[0], names.signature)) signatures.push(pair[1]);
        else if (!ignored(prepared, pair[0])) pairs.push(pair);
    });
    if (signatures.length !== 1) stop('refuse', signatures.length ? 'URL has more than one signature' : 'URL has no signature');
    var expiries = valuesOf(pairs, names.expires), nonces = valuesOf(pairs, names.nonce);
    var starts = valuesOf(pairs, names.starts), prefixes = valuesOf(pairs, names.prefix);
    var keyIds = valuesOf(pairs, names.key_id);
    var grouped = pairs.filter(function (p) { return same(p[0], names.group) || same(p[0], names.issued); });
    if (expiries.length > 1) stop('refuse', 'URL has more than one expiry');
    if (nonces.length > 1) stop('refuse', 'URL has more than one nonce');
    if (starts.length > 1) stop('refuse', 'URL has more than one start');
    if (keyIds.length > 1) stop('refuse', 'URL has more than one key id');
    var host = boundHost(prepared, parts.scheme, parts.netloc);
    var prefix = prefixes.length ? readPrefix(prefixes) : null;
    var text = canonical(prefix === null ? 'url1' : 'url1p', host, prefix === null ? canonicalPath(parts.path) : prefix, pairs);
    var signature = signatures[0];
    if (signature.length !== MAC_LENGTH) stop('refuse', 'malformed signature');
    var keys = keysFor(prepared, keyIds, text);
    return {
        pending: { keys: keys, text: text, signature: signature },
        after: function () {
            var times = verifiedTimes(expiries[0], starts[0], now);
            var nonce = nonces.length ? nonces[0] : null;
            if (nonce !== null) {
                if (!NONCE.test(asText(nonce))) stop('refuse', 'malformed nonce');
                if (times.expires === null) stop('refuse', 'single-use URL without expiry');
            }
            var disposition = readLinkOptions(names, pairs, nonce !== null);
            var group = grouped.length ? verifiedGroup(names, grouped, times.expires) : null;
            if (prefix === null) return { prefix: null, below: null, nonce: nonce, group: group, disposition: disposition };
            if (nonce !== null || disposition !== null) stop('refuse', 'folder URL with a nonce or a download name');
            var rest = below(parts.path, asText(prefix));
            if (rest === null) stop('refuse', 'path is not inside the signed prefix');
            return { prefix: asText(prefix), below: rest, nonce: null, group: group, disposition: null };
        }
    };
}

// verifyLink for the usual link in its canonical form, as the signer writes it: `url` is the target (no Host bound)
// and of USUAL_TARGET, or that with a grant cookie's pairs of USUAL_GRANT added. So its path is plain, with no empty
// or dot segment but the last, empty one (its own canonical form, and pathProblem finds nothing in it), each pair has
// one "=", its name is its own encoding and its value too (a value with "%" decoded once, to ASCII). Otherwise as
// usualLink, without its regular expressions and encodeURIComponent, and null where usualLink would return null.
function canonicalLink(prepared, url, now) {
    if (url.length > prepared.maxUrlLength || url.charAt(0) !== '/') return null;
    var names = prepared.names, question = url.indexOf('?');
    if (question < 0) return null;
    // (njs: locals, not a property read per comparison; each role compared as usualLink's `found` has them)
    var sig = names.signature, exp = names.expires, pre = names.prefix, kid = names.key_id, sta = names.starts;
    var non = names.nonce, con = names.consume, dis = names.disposition, fil = names.filename, gro = names.group;
    var iss = names.issued, ignoring = prepared.ignore.length > 0;
    var path = url.slice(0, question), fields = url.slice(question + 1).split('&');
    var signature = null, expires, starts, prefix, keyId, kept = [], i, k;
    for (i = 0; i < fields.length; i++) {
        var field = fields[i], eq = field.indexOf('='), name = field.slice(0, eq);
        if (name === sig) {
            if (signature !== null) return null;
            signature = field.slice(eq + 1);
            continue;
        }
        if (ignoring && ignored(prepared, asciiCodes(name))) continue;
        if (name === non || name === con || name === dis || name === fil || name === gro || name === iss) return null;
        var known = false;
        if (name === exp) {
            if (expires !== undefined) return null;
            expires = field.slice(eq + 1);  // (readTime refuses it with or without an escape, of no digit)
            known = true;
        }
        if (name === pre) {
            if (prefix !== undefined) return null;
            prefix = unescaped(field.slice(eq + 1));
            known = true;
        }
        if (name === kid) {
            if (keyId !== undefined) return null;
            keyId = unescaped(field.slice(eq + 1));
            known = true;
        }
        if (name === sta) {
            if (starts !== undefined) return null;
            starts = field.slice(eq + 1);
            known = true;
        }
        if (!known) for (k = 0; k < kept.length; k++) if (kept[k][0] === name) return null;
        for (k = kept.length; k > 0 && kept[k - 1][0] > name; k--) kept[k] = kept[k - 1];  // (sorted by name)
        kept[k] = [name, field];
    }
    if (signature === null || signature.length !== MAC_LENGTH || signature.indexOf('%') >= 0) return null;
    if (prefix === undefined) {
        prefix = null;
    } else if (prefix.charAt(0) !== '/' || prefix.charAt(prefix.length - 1) !== '/' || prefix.indexOf('\n') >= 0) {
        return null;
    }
    var query = kept.length ? kept[0][1] : '';
    for (i = 1; i < kept.length; i++) query += '&' + kept[i][1];
    var text = (prefix === null ? 'url1\n\n' + path : 'url1p\n\n' + prefix) + '\n' + query + '\n';
    if (text.length + MAC_LENGTH > 2 * prepared.maxUrlLength + 64) return null;
    var keys = [];
    for (i = 0; i < prepared.keys.length; i++) if (keyId === undefined || prepared.keys[i].id === keyId) keys.push(i);
    if (!keys.length) return null;
    return {
        pending: { keys: keys, text: utf8(text), signature: signature },
        after: function () {
            verifiedTimes(expires, starts, now);
            if (prefix === null) return { prefix: null, below: null, nonce: null, group: null, disposition: null };
            // (below(): a plain path without empty or dot segments is inside a prefix it starts with)
            if (path.indexOf(prefix) !== 0) stop('refuse', 'path is not inside the signed prefix');
            return { prefix: prefix, below: path.slice(prefix.length), nonce: null, group: null, disposition: null };
        }
    };
}

// The usual target, read by canonicalLink: "/", then segments of PLAIN_PATH's characters joined by "/", none empty
// or starting with "." (but a last, empty one: a trailing "/"); then maybe "?" and NAME=VALUE pairs joined by "&",
// in their canonical form: a NAME of unreserved characters ([A-Za-z0-9._~-]), a VALUE of them and "%XX" escapes
// (capitals) of the ASCII characters encode() escapes, but "!'()*" (UNUSUAL_QUERY's). One literal: njs would build
// a RegExp made of parts again for every request.
var USUAL_TARGET =
    /^\/(?:[A-Za-z0-9!$&'()*+,;=:@_~-][A-Za-z0-9!$&'()*+,;=:@._~-]*(?:\/[A-Za-z0-9!$&'()*+,;=:@_~-][A-Za-z0-9!$&'()*+,;=:@._~-]*)*\/?)?(?:\?[A-Za-z0-9._~-]*=[A-Za-z0-9._~-]*(?:%(?:[01][0-9A-F]|2[02-6BCF]|3[A-F]|40|5[B-E]|60|7[B-DF])[A-Za-z0-9._~-]*)*(?:&[A-Za-z0-9._~-]*=[A-Za-z0-9._~-]*(?:%(?:[01][0-9A-F]|2[02-6BCF]|3[A-F]|40|5[B-E]|60|7[B-DF])[A-Za-z0-9._~-]*)*)*)?$/;
// A grant cookie's value whose pairs (NAME:VALUE) are of USUAL_TARGET's form.
var USUAL_GRANT = /^[A-Za-z0-9._~-]*:[A-Za-z0-9._~-]*(?:%(?:[01][0-9A-F]|2[02-6BCF]|3[A-F]|40|5[B-E]|60|7[B-DF])[A-Za-z0-9._~-]*)*(?:&[A-Za-z0-9._~-]*:[A-Za-z0-9._~-]*(?:%(?:[01][0-9A-F]|2[02-6BCF]|3[A-F]|40|5[B-E]|60|7[B-DF])[A-Za-z0-9._~-]*)*)*$/;

// verifyLink for the usual link, read without code points (njs interprets every loop): a URL without "#", tab or
// line break whose query's names and values have no "+" and decode to ASCII, with one signature of 43 characters, at
// most one expiry, start, key id and prefix and none of the parameters only the origin decides (single use, group,
// download name), a known key id, and, without a prefix, a plain path without dot segments (its own canonical form).
// null for anything else: verifyLink's general reading then decides it, the same way, from the start.
function usualLink(prepared, url, now) {
    if (url.length > prepared.maxUrlLength || url.indexOf('#') >= 0) return null;
    var names = prepared.names, host = '', start = 0;
    if (url.charAt(0) !== '/') {  // "scheme://" + a checked Host header + the target
        if (/[\t\r\n]/.test(url)) return null;  // (split drops them from such a URL)
        start = url.indexOf('/', url.indexOf('://') + 3);
        var scheme = url.slice(0, url.indexOf('://')), netloc = url.slice(scheme.length + 3, start);
        if (!/^[A-Za-z0-9.-]+(?::[0-9]+)?$/.test(netloc) || start < 0) return null;
        host = netloc.toLowerCase();
        var port = DEFAULT_PORTS[scheme];
        if (host.slice(-port.length) === port) host = host.slice(0, -port.length);
        host = host.replace(':', '%3A');
        if (!prepared.bindHost) return null;
    }
    var question = url.indexOf('?', start);
    var path = question < 0 ? url.slice(start) : url.slice(start, question);
    var raw = question < 0 ? '' : url.slice(question + 1);
    if (UNUSUAL_QUERY.test(raw)) return null;
    var fields = raw.split('&');
    var signature = null, pairs = [], found = {}, i;
    for (i = 0; i < fields.length; i++) {
        if (!fields[i]) continue;
        var eq = fields[i].indexOf('=');
        var name = unescaped(eq < 0 ? fields[i] : fields[i].slice(0, eq));
        var value = eq < 0 ? '' : unescaped(fields[i].slice(eq + 1));
        if (name === names.signature) {
            if (signature !== null) return null;
            signature = value;
        } else if (!prepared.ignore.length || !ignored(prepared, asciiCodes(name))) {
            if (found['=' + name] !== undefined) return null;  // (any repeated name: the general reading's)
            found['=' + name] = value;
            pairs.push([name, value, pairs.length]);
        }
    }
    if (signature === null || signature.length !== MAC_LENGTH) return null;
    if (found['=' + names.nonce] !== undefined || found['=' + names.consume] !== undefined ||
        found['=' + names.disposition] !== undefined || found['=' + names.filename] !== undefined ||
        found['=' + names.group] !== undefined || found['=' + names.issued] !== undefined) return null;
    var prefix = found['=' + names.prefix], keyId = found['=' + names.key_id];
    if (prefix === undefined) {
        prefix = null;
        if (!PLAIN_PATH.test(path) || path.indexOf('/.') >= 0 || path.charAt(0) !== '/') return null;
    } else if (prefix.charAt(0) !== '/' || prefix.charAt(prefix.length - 1) !== '/' || prefix.indexOf('\n') >= 0) {
        return null;
    }
    pairs.sort(function (a, b) { return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[2] - b[2]; });
    var query = pairs.map(function (p) {  // (encode(): no "!'()*" in them, by UNUSUAL_QUERY)
        return encodeURIComponent(p[0]) + '=' + encodeURIComponent(p[1]);
    }).join('&');
    var text = (prefix === null ? 'url1' : 'url1p') + '\n' + host + '\n' + (prefix === null ? path : prefix) + '\n' +
        query + '\n';
    if (text.length + MAC_LENGTH > 2 * prepared.maxUrlLength + 64) return null;
    var keys = [];
    for (i = 0; i < prepared.keys.length; i++) if (keyId === undefined || prepared.keys[i].id === keyId) keys.push(i);
    if (!keys.length) return null;
    var expires = found['=' + names.expires], starts = found['=' + names.starts];
    return {
        pending: { keys: keys, text: utf8(text), signature: signature },
        after: function () {
            verifiedTimes(expires, starts, now);
            if (prefix === null) return { prefix: null, below: null, nonce: null, group: null, disposition: null };
            var rest = below(path, prefix);
            if (rest === null) stop('refuse', 'path is not inside the signed prefix');
            return { prefix: prefix, below: rest, nonce: null, group: null, disposition: null };
        }
    };
}

// A query the usual reading leaves to the general one: a "+" (a space), an escape that is malformed or of a byte
// beyond ASCII (decodeURIComponent would throw, or give other code points than parse_query), or one of "!'()*"
// (which decodeURIComponent and encodeURIComponent keep as they are, and encode() escapes) raw or escaped. Without
// them, each name and value decodes (decodeURIComponent) to ASCII as parse_query decodes it, and encodeURIComponent
// writes it as encode() does.
var UNUSUAL_QUERY = /[+!'()*]|%(?![0-7][0-9A-Fa-f])|%2[1789Aa]/;

// A name or value of the usual query decoded (ASCII: UNUSUAL_QUERY); most have no escape (njs: a call saved).
function unescaped(text) {
    return text.indexOf('%') < 0 ? text : decodeURIComponent(text);
}

function asciiCodes(text) {
    var out = [];
    for (var i = 0; i < text.length; i++) out.push(text.charCodeAt(i));
    return out;
}

// The indexes of the keys to try: those of the link's key id, else every key (links signed before key ids).
function keysFor(prepared, keyIds, text) {
    var keys = [];
    prepared.keys.forEach(function (k, i) { if (!keyIds.length || same(keyIds[0], k.id)) keys.push(i); });
    if (!keys.length) stop('origin', 'unknown key id');
    // The MAC input is bounded as the signer's tokens are: 2 * max_url_length + 64, with the tag.
    if (text.length + MAC_LENGTH > 2 * prepared.maxUrlLength + 64) stop('refuse', 'token too long');
    return keys;
}

function valuesOf(pairs, name) {
    return pairs.filter(function (p) { return same(p[0], name); }).map(function (p) { return p[1]; });
}

function ignored(prepared, name) {
    return prepared.ignore.some(function (pattern) { return fnmatch(name, pattern); });
}

// The text a link's MAC covers, as ASCII bytes: the query's pairs sorted by name (code points), each encoded.
function canonical(form, host, path, pairs) {
    var kept = pairs.map(function (p, i) { return [p, i]; });
    kept.sort(function (a, b) { return compareCodePoints(a[0][0], b[0][0]) || a[1] - b[1]; });
    var query = kept.map(function (k) { return encode(k[0][0]) + '=' + encode(k[0][1]); }).join('&');
    if (typeof path !== 'string') {  // a folder's prefix, as decoded: the MAC covers ASCII only
        if (path.some(function (c) { return c > 0x7f; })) stop('refuse', 'URL is not valid text');
        path = asText(path);
    }
    return utf8(form + '\n' + host + '\n' + path + '\n' + query + '\n');  // (ASCII)
}

function readPrefix(prefixes) {
    if (prefixes.length !== 1) stop('refuse', 'URL has more than one prefix');
    var prefix = prefixes[0];
    if (prefix[0] !== 0x2f || prefix[prefix.length - 1] !== 0x2f || prefix.indexOf(0x0a) >= 0) {
        stop('refuse', 'malformed prefix');
    }
    return prefix;
}

// The host a host-bound link's MAC covers: the checked Host header, lowercased, without the scheme's default port.
function boundHost(prepared, scheme, netloc) {
    if (!prepared.bindHost) return '';
    var host = netloc.toLowerCase(), port = DEFAULT_PORTS[scheme];
    if (host.slice(-port.length) === port) host = host.slice(0, -port.length);
    return encode(codePoints(host));
}

// The expiry and start (null: none), if `now` is within them.
function verifiedTimes(expires, starts, now) {
    var expiresAt = expires === undefined ? null : readTime(expires, 'expiry');
    var startsAt = starts === undefined ? null : readTime(starts, 'start');
    if (expiresAt !== null && startsAt !== null && startsAt >= expiresAt) stop('refuse', 'URL starts at or after its expiry');
    if (expiresAt !== null && now >= expiresAt) stop('refuse', 'signed URL has expired');
    if (startsAt !== null && now < startsAt - CLOCK_SKEW) stop('refuse', 'signed URL is not valid yet');
    return { expires: expiresAt, starts: startsAt };
}

function readTime(value, what) {
    if (typeof value === 'string' && value.length <= 10) {  // (njs: digits in their shortest form, no regex)
        var n = +value;
        if (n >= 0 && n % 1 === 0 && String(n) === value) return n;
    }
    var text = asText(value);
    if (!TIME.test(text)) stop('refuse', 'malformed ' + what);
    return Number(text);
}

// links/text.py read_link_options, as a front server reads them (no judgement of the download name: that is the
// origin's, which gets every link with a disposition): the disposition, or null when the link names no download.
function readLinkOptions(names, pairs, hasNonce) {
    var consumes = valuesOf(pairs, names.consume), dispositions = valuesOf(pairs, names.disposition);
    var filenames = valuesOf(pairs, names.filename);
    if (consumes.length > 1 || dispositions.length > 1 || (dispositions.length && filenames.length > 1)) {
        stop('refuse', 'URL repeats a consume, disposition or filename parameter');
    }
    if (consumes.length) {
        if (!same(consumes[0], 'post')) stop('refuse', 'malformed consume parameter');
        if (!hasNonce) stop('refuse', 'consume=post on a URL that is not single-use');
    }
    if (!dispositions.length) return null;  // a filename alone is the application's own parameter
    if (!same(dispositions[0], 'attachment') && !same(dispositions[0], 'inline')) stop('refuse', 'malformed disposition');
    return asText(dispositions[0]);
}

function verifiedGroup(names, grouped, expiresAt) {
    var groups = valuesOf(grouped, names.group);
    var issued = grouped.filter(function (p) { return !same(p[0], names.group); });
    if (groups.length !== 1 || issued.length !== 1) stop('refuse', 'URL needs one group and one issue time');
    if (!GROUP_ID.test(asText(groups[0]))) stop('refuse', 'malformed group');
    if (!ISSUED.test(asText(issued[0][1]))) stop('refuse', 'malformed issue time');
    if (expiresAt === null) stop('refuse', 'grouped URL without expiry');
    return asText(groups[0]);
}

// ---- Folders (links/folders.py) ----

// The decoded path below `prefix`, or null when `path` is not inside it on whole segments.
function below(path, prefix) {
    if (PLAIN_PATH.test(path)) {
        if (path.indexOf(prefix) !== 0) return null;
        var rest = path.slice(prefix.length);
        // (the usual path: no segment starts with "." and none but the last is empty; njs: no split needed)
        if (('/' + rest).indexOf('/.') < 0 && rest.indexOf('//') < 0 && rest.charAt(0) !== '/') return rest;
        var segments = rest.split('/');
        if (segments.slice(0, -1).some(isDotSegment) || isDotOrDotDot(segments[segments.length - 1])) return null;
        return rest;
    }
    if (pathProblem(path) !== null) return null;
    var canonicalForm = canonicalPath(path);
    if (canonicalForm.indexOf(prefix) !== 0) return null;
    return strictText(unquoteBytes(canonicalForm.slice(prefix.length)));
}

// Why a request path (percent-encoded) can be inside no prefix, or null.
function pathProblem(path) {
    if (!/^[\x00-\x7f]*$/.test(path)) return 'raw non-ASCII character';
    var text = path;
    for (var depth = 0; depth < 3; depth++) {
        if (text.indexOf('%') < 0) return segmentsProblem(text);
        if (/%2F|%5C/i.test(text)) return 'encoded slash or backslash';
        var decoded = strictText(unquoteBytes(text));
        if (decoded === null) return 'not UTF-8 once decoded';
        var problem = segmentsProblem(decoded);
        if (problem !== null) return problem;
        if (decoded === text) return null;
        text = decoded;
    }
    return 'percent-encoded too many times';
}

function segmentsProblem(decoded) {
    if (decoded.charAt(0) !== '/') return 'not an absolute path';
    if (decoded.indexOf('\\') >= 0) return 'backslash';
    if (CONTROL_CHARACTER.test(decoded)) return 'control character';
    var segments = decoded.split('/');
    if (segments.slice(1, -1).some(isDotSegment) || isDotOrDotDot(segments[segments.length - 1])) {
        return "empty, '.' or '..' segment";
    }
    return null;
}

function isDotSegment(segment) {
    return segment === '' || isDotOrDotDot(segment);
}

function isDotOrDotDot(segment) {
    return segment === '.' || segment === '..';
}

// ---- Text (links/text.py) ----

// (scheme, netloc, path, query). A URL not starting with "/" is "scheme://" + a Host header of HOST + the target:
// urlsplit reads its netloc as that Host, after dropping tabs and line breaks anywhere, and refuses brackets
// around anything but an IPv6 address.
function split(url) {
    var scheme = '', netloc = '';
    if (url.charAt(0) !== '/') {
        url = url.replace(/[\t\r\n]/g, '');
        var start = url.indexOf('://') + 3, end = url.indexOf('/', start);
        scheme = url.slice(0, start - 3);
        netloc = url.slice(start, end);
        url = url.slice(end);
        if (netloc.charAt(0) === '[' && !ipv6Ok(netloc.slice(1, netloc.indexOf(']')))) stop('refuse', 'malformed URL');
    }
    var parts = partition(partition(url, '#')[0], '?');
    return { scheme: scheme, netloc: netloc, path: parts[0], query: parts[2] };
}

// Python's ipaddress.IPv6Address rules, for what HOST lets between brackets (hex digits, ":" and ".").
function ipv6Ok(text) {
    var parts = text.split(':');
    if (parts.length < 3) return false;
    if (parts[parts.length - 1].indexOf('.') >= 0) {  // the last 32 bits written as an IPv4 address
        if (!ipv4Ok(parts.pop())) return false;
        parts.push('0', '0');
    }
    if (parts.length > 9) return false;
    var skips = [];
    for (var i = 1; i < parts.length - 1; i++) if (!parts[i]) skips.push(i);
    if (skips.length > 1) return false;
    var high = parts.length, low = 0;
    if (skips.length) {  // "::": the hextets before and after it (an empty end is allowed only as part of it)
        high = skips[0];
        low = parts.length - skips[0] - 1;
        if (!parts[0] && --high) return false;
        if (!parts[parts.length - 1] && --low) return false;
        if (8 - (high + low) < 1) return false;
    } else if (parts.length !== 8) {
        return false;
    }
    var hextets = parts.slice(0, high).concat(parts.slice(parts.length - low));
    return hextets.every(function (p) { return /^[0-9A-Fa-f]{1,4}$/.test(p); });
}

function ipv4Ok(text) {
    var octets = text.split('.');
    return octets.length === 4 && octets.every(function (o) {
        return /^[0-9]{1,3}$/.test(o) && Number(o) <= 255 && !(o.length > 1 && o.charAt(0) === '0');
    });
}

// The query's [name, value] pairs, decoded to code points (links/text.py parse_query).
function parseQuery(query) {
    var pairs = [];
    query.split('&').forEach(function (field) {
        if (!field) return;
        var parts = partition(field, '=');
        pairs.push([unquoteQuery(parts[0]), unquoteQuery(parts[2])]);
    });
    return pairs;
}

function unquoteQuery(text) {
    return decodeEscaped(unquoteBytes(text.replace(/\+/g, ' ')));
}

// A path in the canonical form: segments re-encoded, "%2F" kept encoded, dot segments written encoded.
function canonicalPath(path) {
    var result = path.split(/%2F/i).map(function (piece) {
        return percentEncode(unquoteBytes(piece), PATH_SAFE);
    }).join('%2F');
    if (result.indexOf('/.') >= 0 || result.charAt(0) === '.') {
        result = result.split('/').map(function (segment) {
            return segment === '.' ? '%2E' : segment === '..' ? '%2E%2E' : segment;
        }).join('/');
    }
    return result || '/';
}

// A query name or value (code points) as the canonical form writes it.
function encode(text) {
    return percentEncode(encodeEscaped(text), QUERY_SAFE);
}

function percentEncode(bytes, safe) {
    var out = '';
    for (var i = 0; i < bytes.length; i++) {
        var b = bytes[i], c = String.fromCharCode(b);
        if (b < 0x80 && (/[A-Za-z0-9]/.test(c) || safe.indexOf(c) >= 0)) out += c;
        else out += '%' + (b < 16 ? '0' : '') + b.toString(16).toUpperCase();
    }
    return out;
}

// %XX escapes to bytes (a malformed escape is kept as it is), of the UTF-8 of `text`.
function unquoteBytes(text) {
    var b = utf8(text), out = [];
    for (var i = 0; i < b.length; i++) {
        if (b[i] === 0x25 && i + 2 < b.length && isHex(b[i + 1]) && isHex(b[i + 2])) {
            out.push(parseInt(String.fromCharCode(b[i + 1], b[i + 2]), 16));
            i += 2;
        } else {
            out.push(b[i]);
        }
    }
    return out;
}

function isHex(b) {
    return (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
}

// ---- Playlists (edge/reference.py playlist_query, sign_playlist; links/playlists.py) ----

// The tags whose URI="..." attribute a player fetches.
var URI_TAGS = ['EXT-X-KEY', 'EXT-X-SESSION-KEY', 'EXT-X-MAP', 'EXT-X-MEDIA', 'EXT-X-I-FRAME-STREAM-INF', 'EXT-X-PART',
    'EXT-X-PRELOAD-HINT', 'EXT-X-RENDITION-REPORT', 'EXT-X-SESSION-DATA'];
var LINE_BREAKS = /(\r\n|\r|\n)/;
// The relative URIs a front server signs: segments of unreserved characters (no dot segment: checked apart).
var SIMPLE_RELATIVE = /^[A-Za-z0-9._~-]+(?:\/[A-Za-z0-9._~-]+)*$/;
// What signPlaylist's usual reading leaves to signLine: a line break other than "\n" (or one PCRE may take for
// one), a BOM; a line that is neither empty nor a tag ("#...") nor a URI of one segment of unreserved characters.
var PLAYLIST_BREAKS = /[\r\x0b\x0c\x85\u2028\u2029\ufeff]/;
var OTHER_URI_LINE = /^(?!#)[A-Za-z0-9._~-]*[^A-Za-z0-9._~\n-]/m;
// One item of a tag's attribute list: NAME=value, the value quoted (no '"', CR or LF) or not.
var ATTRIBUTE = /([A-Z0-9-]+)=("[^"\r\n]*"|[^",]*)/y;
// Python's str.strip() whitespace (JavaScript's trim() differs: it strips U+FEFF, keeps \x1c-\x1f and U+0085).
var SPACE = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
var SURROUNDING_SPACE = null;  // (made on first use, as K below)
var PLAYLIST_NAME = /\.m3u8?$/i;
// What a rewritten playlist is sent with: it carries a signature, so no cache keeps it.
var REWRITTEN_HEADERS = { 'Content-Type': 'application/vnd.apple.mpegurl', 'Cache-Control': 'private, no-store' };
// The largest playlist a wrapper rewrites, in bytes (links/playlists.py MAX_SERVED_SIZE).
var MAX_PLAYLIST_SIZE = 1024 * 1024;

// The query a playlist served by the folder link in `target` passes on to its URIs: the request's pairs less the
// ignored ones, each re-encoded, in the order sent; null for a request with no signature in its URL.
function playlistQuery(prepared, target) {
    var query = partition(partition(target, '#')[0], '?')[2];
    if (!prepared.ignore.length && USUAL_TARGET.test(target)) {  // (pairs in their canonical form: the query itself)
        return ('&' + query).indexOf('&' + prepared.names.signature + '=') >= 0 ? query : null;
    }
    var pairs = parseQuery(query).filter(function (p) { return !ignored(prepared, p[0]); });
    if (!pairs.some(function (p) { return same(p[0], prepared.names.signature); })) return null;
    return pairs.map(function (p) { return encode(p[0]) + '=' + encode(p[1]); }).join('&');
}

// `text` with "?" + `query` after each simple relative URI that resolves inside `prefix` from `playlistPath` (the
// request's path, before "?"), on URI lines and in the URI attributes of URI_TAGS; the rest as it was.
function signPlaylist(text, query, playlistPath, prefix) {
    var folder = playlistPath.slice(0, playlistPath.lastIndexOf('/') + 1);
    // Whether a URI of one segment (not "." or "..") is inside the prefix depends on the folder alone when the
    // folder is a plain path that the prefix does not reach past: then below() is asked once, for all of them.
    var oneSegment = PLAIN_PATH.test(folder) && prefix.length <= folder.length ? below(folder + 'x', prefix) !== null : null;
    function add(uri) {
        if (!SIMPLE_RELATIVE.test(uri)) return uri;
        if (uri.indexOf('/') < 0) {
            if (isDotOrDotDot(uri)) return uri;
            if (oneSegment !== null) return oneSegment ? uri + '?' + query : uri;
        } else if (uri.split('/').some(isDotOrDotDot)) {
            return uri;
        }
        return below(folder + uri, prefix) === null ? uri : uri + '?' + query;
    }
    var i, pieces, line;
    // The usual playlist: tags without a URI attribute and URIs of one segment alone on their lines (signLine signs
    // those, but "." and "..", and leaves the rest as it is); njs: no call nor regular expression per line.
    if (oneSegment !== null && !PLAYLIST_BREAKS.test(text) && text.indexOf('URI="') < 0 && !OTHER_URI_LINE.test(text)) {
        if (!oneSegment) return text;
        pieces = text.split('\n');
        for (i = 0; i < pieces.length; i++) {
            line = pieces[i];
            if (line && line[0] !== '#' && line !== '.' && line !== '..') pieces[i] = line + '?' + query;
        }
        return pieces.join('\n');
    }
    // (njs interprets all this, line by line: each step skips the regular expressions a usual line needs not)
    if (text.indexOf('\r') < 0) {  // only "\n" line breaks: the lines between them
        pieces = text.split('\n');
        for (i = 0; i < pieces.length; i++) {
            if (pieces[i]) pieces[i] = signLine(pieces[i], add);
        }
        return pieces.join('\n');
    }
    pieces = text.split(LINE_BREAKS);  // lines at even indexes, their endings between
    for (i = 0; i < pieces.length; i += 2) {
        if (pieces[i]) pieces[i] = signLine(pieces[i], add);
    }
    return pieces.join('');
}

// One line with its URI signed: a URI line, or a tag of URI_TAGS with a URI attribute.
function signLine(line, add) {
    var content = pythonStrip(line.charAt(0) === '\ufeff' ? line.replace(/^\ufeff+/, '') : line);
    if (!content) return line;
    var start = line.indexOf(content);
    if (content.charAt(0) !== '#') return line.slice(0, start) + add(content) + line.slice(start + content.length);
    var name = partition(content.slice(1), ':');
    if (!name[1] || URI_TAGS.indexOf(name[0]) < 0) return line;
    start += name[0].length + 2;
    return line.slice(0, start) + signAttributes(line.slice(start), add);
}

// An attribute list with its quoted URI signed; a list that cannot be read is left as it is.
function signAttributes(text, add) {
    var out = '', position = 0;
    while (position < text.length) {
        ATTRIBUTE.lastIndex = position;
        var found = ATTRIBUTE.exec(text);
        if (found === null) return text;
        var value = found[2];
        if (found[1] === 'URI' && value.length >= 2 && value.charAt(0) === '"' && value.charAt(value.length - 1) === '"') {
            value = '"' + add(value.slice(1, -1)) + '"';
        }
        out += found[1] + '=' + value;
        position = ATTRIBUTE.lastIndex;
        if (position < text.length) {
            if (text.charAt(position) !== ',') {
                var rest = text.slice(position);
                if (pythonStrip(rest)) return text;
                return out + rest;
            }
            out += ',';
            position++;
        }
    }
    return out;
}

function pythonStrip(text) {
    var first = text.charCodeAt(0), last = text.charCodeAt(text.length - 1);
    if (first > 0x20 && first < 0x7f && last > 0x20 && last < 0x7f) return text;  // (no space around: no replace)
    if (SURROUNDING_SPACE === null) SURROUNDING_SPACE = new RegExp('^[' + SPACE + ']+|[' + SPACE + ']+$', 'g');
    return text.replace(SURROUNDING_SPACE, '');
}

// ---- What every wrapper does alike ----

// Whether a path (percent-encoded or not) names an HLS playlist: .m3u8 or .m3u, any case.
function isPlaylist(path) {
    var last = path.charAt(path.length - 1);
    return (last === '8' || last === 'u' || last === 'U') && PLAYLIST_NAME.test(path);
}

// The query to rewrite the response to an allowed request with (a playlist by a folder link in its URL), or null
// to send the file as it is. The wrapper rewrites a 200 response: signPlaylist(body, query, path, verdict.prefix).
function playlistRewrite(prepared, v, target) {
    if (v.decision !== 'allow' || v.prefix === null || v.granted) return null;
    if (!isPlaylist(partition(target, '?')[0])) return null;
    return playlistQuery(prepared, target);
}

// The Cache-Control and Vary of a response to a granted request (links/grants.py private): `private` (no public,
// no s-maxage; no-store kept) and Vary: Cookie, from the response's own (null: none).
function privateHeaders(cacheControl, vary) {
    if (cacheControl == null && vary == null) return { 'Cache-Control': 'private', 'Vary': 'Cookie' };  // (a file's)
    var kept = splitList(cacheControl).filter(function (d) {
        var l = d.toLowerCase();
        return l !== 'public' && l.indexOf('s-maxage') !== 0;
    });
    if (!kept.some(function (d) { var l = d.toLowerCase(); return l === 'private' || l === 'no-store'; })) kept.push('private');
    var varied = splitList(vary);
    if (!varied.some(function (v) { return v === '*' || v.toLowerCase() === 'cookie'; })) varied.push('Cookie');
    return { 'Cache-Control': kept.join(', '), 'Vary': varied.join(', ') };
}

function splitList(header) {
    return String(header || '').split(',').map(function (d) { return d.trim(); }).filter(function (d) { return d; });
}

// ---- Code points and bytes ----

function utf8(text) {
    return new TextEncoder().encode(text);
}

function codePoints(text) {
    return decodeEscaped(utf8(text));
}

// UTF-8 bytes to code points, a byte of no valid sequence as 0xDC00 + byte (Python's surrogateescape).
function decodeEscaped(bytes) {
    var out = [];
    for (var i = 0; i < bytes.length;) {
        var n = sequenceLength(bytes, i), c = bytes[i];
        if (n === 0) {
            out.push(0xdc00 + c);
            n = 1;
        } else if (n > 1) {
            c &= 0xff >> (n + 1);
            for (var k = 1; k < n; k++) c = (c << 6) | (bytes[i + k] & 0x3f);
            out.push(c);
        } else {
            out.push(c);
        }
        i += n;
    }
    return out;
}

// The length of the well-formed UTF-8 sequence at bytes[i], or 0 (no overlong form, surrogate or beyond U+10FFFF).
function sequenceLength(bytes, i) {
    var c = bytes[i], n, low = 0x80, high = 0xbf;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) n = 3;
    else if (c >= 0xf0 && c <= 0xf4) n = 4;
    else return 0;
    if (c === 0xe0) low = 0xa0;
    if (c === 0xed) high = 0x9f;
    if (c === 0xf0) low = 0x90;
    if (c === 0xf4) high = 0x8f;
    if (i + n > bytes.length) return 0;
    for (var k = 1; k < n; k++) {
        var d = bytes[i + k];
        if (d < (k === 1 ? low : 0x80) || d > (k === 1 ? high : 0xbf)) return 0;
    }
    return n;
}

// Code points back to bytes: UTF-8, and an escaped byte as itself.
function encodeEscaped(points) {
    var out = [];
    points.forEach(function (c) {
        if (c < 0x80) out.push(c);
        else if (c >= 0xdc80 && c <= 0xdcff) out.push(c - 0xdc00);
        else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
        else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
        else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 0x3f), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
    });
    return out;
}

// The strictly decoded text of `bytes`, or null when they are not UTF-8.
function strictText(bytes) {
    var points = decodeEscaped(bytes);
    return points.some(function (c) { return c >= 0xdc80 && c <= 0xdcff; }) ? null : asText(points);
}

function asText(points) {
    if (typeof points === 'string') return points;  // (the fast reading's ASCII text)
    var out = '';
    for (var i = 0; i < points.length; i += 4096) out += String.fromCodePoint.apply(null, points.slice(i, i + 4096));
    return out;
}

// Whether decoded `points` spell `text` (ASCII: a parameter name, a key id, a keyword).
function same(points, text) {
    if (points.length !== text.length) return false;
    for (var i = 0; i < text.length; i++) if (points[i] !== text.charCodeAt(i)) return false;
    return true;
}

function compareCodePoints(a, b) {
    for (var i = 0; i < a.length && i < b.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
    return a.length - b.length;
}

// fnmatchcase with "*" and "?" (the only wildcards a keyring holds), on code points.
function fnmatch(name, pattern) {
    var n = 0, p = 0, star = -1, mark = 0;
    while (n < name.length) {
        if (p < pattern.length && (pattern[p] === 0x3f || pattern[p] === name[n])) {
            n++;
            p++;
        } else if (p < pattern.length && pattern[p] === 0x2a) {
            star = p++;
            mark = n;
        } else if (star >= 0) {
            p = star + 1;
            n = ++mark;
        } else {
            return false;
        }
    }
    while (p < pattern.length && pattern[p] === 0x2a) p++;
    return p === pattern.length;
}

function partition(text, separator) {
    var at = text.indexOf(separator);
    return at < 0 ? [text, '', ''] : [text.slice(0, at), separator, text.slice(at + separator.length)];
}

// Equal texts, in a time that does not depend on where they differ. `signature`: code points, or ASCII text.
function sameText(expected, signature) {
    var diff = expected.length ^ signature.length, i;
    if (typeof signature === 'string') {  // (bytes: njs indexes them faster than it calls charCodeAt)
        var encoder = new TextEncoder(), a = encoder.encode(expected), b = encoder.encode(signature);
        if (a.length === MAC_LENGTH && b.length === MAC_LENGTH && !(a.byteOffset & 3) && !(b.byteOffset & 3)) {
            // (two tags: njs interprets each step, so 40 of their 43 bytes as ten 32-bit words, unrolled)
            var x = new Uint32Array(a.buffer, a.byteOffset, 10), y = new Uint32Array(b.buffer, b.byteOffset, 10);
            diff |= x[0] ^ y[0]; diff |= x[1] ^ y[1]; diff |= x[2] ^ y[2]; diff |= x[3] ^ y[3]; diff |= x[4] ^ y[4];
            diff |= x[5] ^ y[5]; diff |= x[6] ^ y[6]; diff |= x[7] ^ y[7]; diff |= x[8] ^ y[8]; diff |= x[9] ^ y[9];
            diff |= a[40] ^ b[40]; diff |= a[41] ^ b[41]; diff |= a[42] ^ b[42];
            return diff === 0;
        }
        for (i = 0; i < a.length; i++) diff |= a[i] ^ (b[i] | 0);
        return diff === 0;
    }
    for (i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ (signature[i] | 0);
    return diff === 0;
}

var BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
var BASE64URL_TEXT = /^[A-Za-z0-9_-]*$/;

function base64url(data) {
    var bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : data;  // WebCrypto's, or a Buffer
    var out = '';
    for (var i = 0; i < bytes.length; i += 3) {
        var n = (bytes[i] << 16) | ((bytes[i + 1] | 0) << 8) | (bytes[i + 2] | 0);
        var chars = Math.min(4, Math.ceil((bytes.length - i) * 4 / 3));
        for (var k = 0; k < chars; k++) out += BASE64URL.charAt((n >> (18 - 6 * k)) & 63);
    }
    return out;
}

function base64urlDecode(text) {
    if (typeof Buffer !== 'undefined' && BASE64URL_TEXT.test(text)) {  // (njs, Node: native)
        return Buffer.from(text, 'base64url');  // (a Uint8Array)
    }
    var out = [], bits = 0, value = 0;
    for (var i = 0; i < text.length; i++) {
        var v = BASE64URL.indexOf(text.charAt(i));
        if (v < 0) throw new Error('a key is not base64url');
        value = (value << 6) | v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push((value >> bits) & 0xff);
        }
    }
    return new Uint8Array(out);
}

// SHA-256 of bytes (FIPS 180-4), for the grant cookies' names: short inputs, and a sync answer in every runtime.
// Its round constants are computed on first use: njs runs a module's top level again for every request.
var K = null;

function roundConstants() {
    var k = [], found = 0;
    for (var n = 2; found < 64; n++) {
        var prime = true;
        for (var d = 2; d * d <= n; d++) if (n % d === 0) prime = false;
        if (prime) k[found++] = (Math.pow(n, 1 / 3) % 1) * 4294967296 | 0;
    }
    return k;
}

function sha256(message) {
    if (K === null) K = roundConstants();
    var h = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    var length = message.length, padded = new Uint8Array(((length + 9 + 63) >> 6) << 6);
    padded.set(message);
    padded[length] = 0x80;
    var bits = length * 8, w = new Array(64);
    for (var j = 0; j < 4; j++) padded[padded.length - 1 - j] = (bits / Math.pow(2, 8 * j)) & 0xff;
    for (var block = 0; block < padded.length; block += 64) {
        for (var t = 0; t < 64; t++) {
            if (t < 16) {
                var o = block + 4 * t;
                w[t] = (padded[o] << 24) | (padded[o + 1] << 16) | (padded[o + 2] << 8) | padded[o + 3];
            } else {
                var s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >>> 3);
                var s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >>> 10);
                w[t] = (w[t - 16] + s0 + w[t - 7] + s1) | 0;
            }
        }
        var a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
        for (t = 0; t < 64; t++) {
            var t1 = (k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t]) | 0;
            var t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
            k = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
        }
        h = [h[0] + a, h[1] + b, h[2] + c, h[3] + d, h[4] + e, h[5] + f, h[6] + g, h[7] + k].map(function (x) { return x | 0; });
    }
    var out = [];
    h.forEach(function (x) { out.push((x >>> 24) & 0xff, (x >>> 16) & 0xff, (x >>> 8) & 0xff, x & 0xff); });
    return out;
}

function rotr(x, n) {
    return (x >>> n) | (x << (32 - n));
}

export default {
    prepare: prepare,
    decide: decide,
    createHmacMac: createHmacMac,
    playlistQuery: playlistQuery,
    signPlaylist: signPlaylist,
    playlistRewrite: playlistRewrite,
    isPlaylist: isPlaylist,
    privateHeaders: privateHeaders,
    REWRITTEN_HEADERS: REWRITTEN_HEADERS,
    MAX_PLAYLIST_SIZE: MAX_PLAYLIST_SIZE,
    HOST: HOST
};
