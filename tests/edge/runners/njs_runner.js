// Prints the njs verifier's answers on a cases file (the last argument, the vectors' schema), one JSON line each,
// in order: {"decision", "prefix", "below", "granted"} per vector; with --playlists (before the file), {"query"}
// per "playlist_queries" case then {"text"} per "playlists" case.
// Run: njs tests/edge/runners/njs_runner.js [--playlists] CASES.json
import fs from 'fs';
import crypto from 'crypto';
import linkcheck from '../../../blake2sign_web/edge/verifiers/js/linkcheck.js';

var cases = JSON.parse(fs.readFileSync(process.argv[process.argv.length - 1]).toString());
var rings = {};
Object.keys(cases.keyrings).forEach(function (name) {
    var prepared = linkcheck.prepare(cases.keyrings[name]);
    rings[name] = { prepared: prepared, mac: linkcheck.createHmacMac(crypto, prepared) };
});
if (process.argv.indexOf('--playlists') >= 0) {
    cases.playlist_queries.forEach(function (c) {
        console.log(JSON.stringify({ query: linkcheck.playlistQuery(rings[c.keyring].prepared, c.target) }));
    });
    cases.playlists.forEach(function (c) {
        console.log(JSON.stringify({ text: linkcheck.signPlaylist(c.text, c.query, c.path, c.prefix) }));
    });
} else {
    cases.vectors.forEach(function (vector) {
        var ring = rings[vector.keyring];
        var v = linkcheck.decide(ring.prepared, vector.request, vector.now, ring.mac);
        console.log(JSON.stringify({ decision: v.decision, prefix: v.prefix, below: v.below, granted: v.granted }));
    });
}
