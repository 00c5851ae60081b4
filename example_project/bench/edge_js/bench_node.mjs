// Verification time of the shipped core (blake2sign_web/edge/verifiers/js/linkcheck.js) inside Node: `decide` on
// each request of a cases file in a loop, timed by the clock of the process, repeated.
//   node bench_node.mjs CASES.json MODE REPEATS MIN_MS      MODE: "hmac" (node:crypto createHmac) or "webcrypto"
// CASES.json: {"keyring": {...}, "now": seconds, "requests": [{method, target, host, scheme, cookie}, ...]}.
// Prints one JSON line: {"mode", "runtime", "us": [CPU µs per verification (process.cpuUsage: user + system), one per
// repeat], "wall_us": [the same by the clock], "verifications", "allowed"}.
import { readFileSync } from 'node:fs';
import crypto from 'node:crypto';
import core from '../../../blake2sign_web/edge/verifiers/js/linkcheck.js';

const [casesPath, mode, repeatsText, minMsText] = process.argv.slice(2);
const cases = JSON.parse(readFileSync(casesPath, 'utf8'));
const prepared = core.prepare(cases.keyring);
const repeats = Number(repeatsText), minMs = Number(minMsText);

async function webcryptoMac() {
    const keys = await Promise.all(prepared.keys.map((k) => crypto.webcrypto.subtle.importKey(
        'raw', k.key instanceof Uint8Array ? k.key : Uint8Array.from(k.key), { name: 'HMAC', hash: 'SHA-256' },
        false, ['sign'])));
    return (index, text) => crypto.webcrypto.subtle.sign('HMAC', keys[index], text);
}

// One pass over every request; the number allowed (every request must be).
async function pass(mac, sync) {
    let allowed = 0;
    for (const request of cases.requests) {
        const verdict = sync ? core.decide(prepared, request, cases.now, mac)
            : await core.decide(prepared, request, cases.now, mac);
        if (verdict.decision === 'allow') allowed++;
    }
    return allowed;
}

const sync = mode === 'hmac';
const mac = sync ? core.createHmacMac(crypto, prepared) : await webcryptoMac();
let allowed = await pass(mac, sync);  // warm up (and check)
if (allowed !== cases.requests.length) {
    console.error(`only ${allowed} of ${cases.requests.length} requests allowed`);
    process.exit(1);
}
const us = [], wallUs = [];
let verifications = 0;
for (let r = -1; r < repeats; r++) {  // repeat -1 warms the JIT up, untimed
    let n = 0;
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    let elapsed = 0;
    while (elapsed < minMs * 1e6) {
        allowed = await pass(mac, sync);
        if (allowed !== cases.requests.length) throw new Error('a request was not allowed');
        n += cases.requests.length;
        elapsed = Number(process.hrtime.bigint() - start);
    }
    const spent = process.cpuUsage(cpu);
    if (r < 0) continue;
    us.push((spent.user + spent.system) / n);
    wallUs.push(elapsed / 1e3 / n);
    verifications += n;
}
console.log(JSON.stringify({ mode, runtime: `node ${process.version}`, us, wall_us: wallUs, verifications, allowed }));
