# workerd config of the Cloudflare Worker (blake2sign_web/edge/verifiers/cloudflare/worker.js) for
# tests/edge/test_video_workerd.py: the Worker on the "http" socket, FILES and ORIGIN two HTTP servers.
#   KEYRING="$(cat keyring.json)" UNVERIFIABLE=origin workerd serve worker.capnp \
#     --socket-addr http=127.0.0.1:0 --control-fd N \
#     --external-addr files=127.0.0.1:$FILES_PORT --external-addr origin=127.0.0.1:$ORIGIN_PORT
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "worker", worker = .worker),
    (name = "files", external = (address = "127.0.0.1:9", http = ())),    # --external-addr files=HOST:PORT
    (name = "origin", external = (address = "127.0.0.1:9", http = ())),   # --external-addr origin=HOST:PORT
  ],
  sockets = [ (name = "http", address = "127.0.0.1:9", http = (), service = "worker") ],
);

const worker :Workerd.Worker = (
  modules = [
    # side by side, as `python -m blake2sign_web.edge cloudflare --out DIR` writes them (and wrangler bundles them)
    (name = "worker.js", esModule = embed "../../../blake2sign_web/edge/verifiers/cloudflare/worker.js"),
    (name = "linkcheck.js", esModule = embed "../../../blake2sign_web/edge/verifiers/js/linkcheck.js"),
  ],
  compatibilityDate = "2025-09-01",
  bindings = [
    (name = "KEYRING", fromEnvironment = "KEYRING"),            # the secret: the keyring's JSON text
    (name = "UNVERIFIABLE", fromEnvironment = "UNVERIFIABLE"),  # "origin" or "refuse"
    (name = "FILES", service = "files"),
    (name = "ORIGIN", service = "origin"),
  ],
);
