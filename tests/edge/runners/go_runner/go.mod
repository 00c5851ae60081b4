module blake2signweb/edge/runner

go 1.19

require blake2signweb/linkcheck v0.0.0

replace blake2signweb/linkcheck => ../../../../blake2sign_web/edge/verifiers/go/linkcheck
