"""The benchmarks: ``python -m example_project.bench [PART ...] [--quick]`` (see docs/performance.md).

One package, one harness, one command: the core signer against the libraries people use today;
what each session engine adds to one request, counted by callgrind (instructions and simulated
cache misses, in process and on a server worker), timed in process and over real HTTP (gunicorn
and uvicorn on 127.0.0.1), under a many-user workload (10,000 users' cookies, 1 and 4 workers),
profiled with py-spy to show where the time goes; signed downloads up to 1 GiB; what revocation
and single-use links add to one request, and revocation at scale (one Redis and a Redis Cluster,
started on loopback). Writes docs/benchmarks/results.json, docs/performance.md and the charts in
docs/img/. These modules also run on their own: ``python -m example_project.bench.core``,
``.request_cost``, ``.downloads``, ``.dictionary_sizes``, ``.gap``.
"""
