// A diagnostic for edge_servers.py: the njs check that allows every request without checking anything, run as the
// shipped snippet runs linkcheck_njs.js's (`js_set` read by the location's `set`, then `if`: no subrequest). What
// nginx spends on it is the machinery's cost (a fresh njs VM per request, in which the modules' top level runs
// again), which the shipped check pays before its first step.
function verdict(r) {
    return 'allow';
}

export default { verdict: verdict };
