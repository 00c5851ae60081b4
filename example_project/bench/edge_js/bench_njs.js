// Verification time of the shipped core (blake2sign_web/edge/verifiers/js/linkcheck.js) inside njs (the engine of
// nginx's js module): `decide` on COUNT requests of a cases file (cycling), with crypto.createHmac as the nginx
// handler uses it, after one untimed call. One timed loop per process: njs frees no memory while a VM runs (nginx
// gives each request a fresh one), and a long loop slows as its memory grows; run the script again to repeat.
// njs has only Date.now() (milliseconds) and no CPU clock: the caller reads the process's CPU time (run it with
// COUNT and with 0, the difference is the loop's).
//   njs bench_njs.js MODE COUNT CASES.json
//   MODE "decide": the verification alone (the keyring prepared once);
//        "handler": as linkcheck_njs.js does per request: prepare the keyring (nginx's js_preload_object: an
//                   object already parsed), decide.
// Prints one JSON line: {"mode", "runtime", "wall_us": [µs per verification by the clock], "verifications", "allowed"}.
import fs from 'fs';
import crypto from 'crypto';
import linkcheck from '../../../blake2sign_web/edge/verifiers/js/linkcheck.js';

var argv = process.argv;
var cases = JSON.parse(fs.readFileSync(argv[argv.length - 1]).toString());
var mode = argv[argv.length - 3], count = Number(argv[argv.length - 2]);
var keyring = typeof cases.keyring === 'string' ? JSON.parse(cases.keyring) : cases.keyring;
var prepared = linkcheck.prepare(keyring);
var mac = linkcheck.createHmacMac(crypto, prepared);

function one(request) {
    if (mode === 'handler') {
        var fresh = linkcheck.prepare(keyring);
        return linkcheck.decide(fresh, request, cases.now, linkcheck.createHmacMac(crypto, fresh));
    }
    return linkcheck.decide(prepared, request, cases.now, mac);
}

if (one(cases.requests[0]).decision !== 'allow') throw new Error('the first request was not allowed');
var allowed = 0, start = Date.now();
for (var i = 0; i < count; i++) {
    if (one(cases.requests[i % cases.requests.length]).decision === 'allow') allowed++;
}
var elapsed = Date.now() - start;
if (allowed !== count) throw new Error('only ' + allowed + ' of ' + count + ' allowed');
console.log(JSON.stringify({ mode: mode, runtime: 'njs ' + njs.version, wall_us: count ? [elapsed * 1e3 / count] : [],
                             verifications: count, allowed: allowed }));
