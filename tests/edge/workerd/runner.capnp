# workerd config of tests/edge/runners/workerd_runner.js (tests/edge/test_workerd.py): linkcheck.js under workerd.
#   workerd serve runner.capnp --socket-addr http=127.0.0.1:0 --control-fd N
# Modules are named by their paths in the repository, so the runner's relative import resolves as on disk.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "runner", worker = .runner) ],
  sockets = [ (name = "http", address = "127.0.0.1:9", http = (), service = "runner") ],
);

const runner :Workerd.Worker = (
  modules = [
    (name = "tests/edge/runners/workerd_runner.js", esModule = embed "../runners/workerd_runner.js"),
    (name = "blake2sign_web/edge/verifiers/js/linkcheck.js",
     esModule = embed "../../../blake2sign_web/edge/verifiers/js/linkcheck.js"),
  ],
  compatibilityDate = "2025-09-01",
);
