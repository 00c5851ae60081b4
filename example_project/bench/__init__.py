"""The request benchmark: ``python -m example_project.bench`` (see docs/request-benchmark.md).

What each session engine adds to one request, in process (Django's handler, Starlette called
directly) and over real HTTP (gunicorn and uvicorn on 127.0.0.1, one worker each, a load
generator in another process), on two workloads: read-only (a login-sized session read on every
request) and read+write (a counter written on every request). Configurations are interleaved
across rounds; each figure is a median with its quartiles; a noisy ratio gets no verdict.
Writes docs/request-benchmark.md, docs/img/request-cost.png and docs/benchmarks/requests.json.
"""
