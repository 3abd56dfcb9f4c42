package proxy

import (
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// newPicker builds twemproxy's placement of the pool over servers.
func newPicker(cfg *PoolConfig, servers []twemproxy.Server) (picker, error) {
	return twemproxy.New(twemproxy.Config{Hash: cfg.Hash, HashTag: cfg.HashTag, Distribution: cfg.Distribution}, servers)
}
