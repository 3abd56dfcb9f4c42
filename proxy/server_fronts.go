package proxy

// frontOf returns the front of a pool configured as cfg: the one place
// that names the protocols the proxy speaks (see front).
func frontOf(cfg *PoolConfig) front {
	if cfg.Redis {
		return redisFront{}
	}
	return memcacheFront{}
}
