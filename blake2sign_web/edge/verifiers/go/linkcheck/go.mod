module blake2signweb/linkcheck

go 1.19
