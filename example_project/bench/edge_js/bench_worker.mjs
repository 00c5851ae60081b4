// Verification time of the shipped core (linkcheck.js, embedded beside this module) inside workerd: GET /?n=N&mode=M
// runs `decide` on N requests of the CASES binding (cycling) and answers {"allowed", "n"}. Workers freeze the clock
// during a request, so the caller times it: (time of n=N - time of n=0) / N. MODE: "webcrypto" (crypto.subtle, as a
// Worker would) or "hmac" (node:crypto createHmac, under the nodejs_compat flag).
import crypto from 'node:crypto';
import core from './linkcheck.js';

let state = null;

async function setup(env) {
    const cases = env.CASES;
    const prepared = core.prepare(cases.keyring);
    const keys = await Promise.all(prepared.keys.map((k) => globalThis.crypto.subtle.importKey(
        'raw', k.key instanceof Uint8Array ? k.key : Uint8Array.from(k.key), { name: 'HMAC', hash: 'SHA-256' },
        false, ['sign'])));
    return {
        cases,
        prepared,
        webcrypto: (index, text) => globalThis.crypto.subtle.sign('HMAC', keys[index], text),
        hmac: core.createHmacMac(crypto, prepared),
    };
}

export default {
    async fetch(request, env) {
        state = state || await setup(env);
        const url = new URL(request.url);
        const n = Number(url.searchParams.get('n') || '0');
        const mode = url.searchParams.get('mode') || 'webcrypto';
        const requests = state.cases.requests;
        let allowed = 0;
        for (let i = 0; i < n; i++) {
            const verdict = mode === 'hmac'
                ? core.decide(state.prepared, requests[i % requests.length], state.cases.now, state.hmac)
                : await core.decide(state.prepared, requests[i % requests.length], state.cases.now, state.webcrypto);
            if (verdict.decision === 'allow') allowed++;
        }
        return Response.json({ allowed, n, mode });
    },
};
