package proxy

import "maps"

// A proxy may start on a configuration edited while it did not run: an
// operator's edit made before the SIGHUP that would have applied it, a
// SIGHUP that a kill -9 overtook, a handover's new process started before
// the old one read the edited file. Its state file then records a pool
// over other servers than the configuration names, and those servers are
// the ones holding the keys: placing by the configuration at once would
// read a store's keys where nothing moved them and a cache's where
// nothing warmed them, and refusing to start leaves the pool unserved
// until an operator puts the old servers back by hand. So the start
// serves the pool over the servers its record names, as the process that
// wrote it did, and then applies the configuration as a reload applies
// it: a move for a store, a warm change for a cache. A state file that
// does not parse, or whose record does not restore the placement it
// records, is still refused (ErrBadStateFile).

// recordedStart returns the configuration a start serves first: cfg, but
// with each pool whose state file record names other servers given those
// servers. differ names those pools; it is empty, and first is cfg, when
// there are none. The error is a [*ConfigError] for kolco.state_file.
func recordedStart(cfg *Config) (first *Config, differ []string, err error) {
	states, err := readStatesFor(cfg, func(string) bool { return false })
	if err != nil || states == nil {
		return cfg, nil, err
	}
	first = cfg
	for _, name := range cfg.PoolNames() {
		pc := cfg.Pools[name]
		rc, ok := states.recordedServers(name, pc)
		if !ok {
			continue
		}
		if first == cfg {
			first = &Config{Pools: maps.Clone(cfg.Pools), Global: cfg.Global, Path: cfg.Path}
		}
		first.Pools[name] = rc
		differ = append(differ, name)
	}
	return first, differ, nil
}

// recordedServers returns cfg over the servers the state file records
// the pool name as placed over; ok is false when they are the
// configuration's (by ID and weight), or when no record says which
// servers hold the pool's keys: a pool on a membership source (which
// keeps its own, see poolState.Served), one recorded with other placement
// settings (placed afresh, see missing), one with no record.
func (st *stateFile) recordedServers(name string, cfg *PoolConfig) (*PoolConfig, bool) {
	ps := st.Pools[name]
	if ps == nil || cfg.Membership != nil || len(ps.Nodes) == 0 || serverList(ps.nodes()) == serverList(cfg.nodes()) {
		return nil, false
	}
	if isTwemproxy(cfg) && (!cfg.Store.Enabled || ps.Distribution != cfg.Distribution) || !isTwemproxy(cfg) && ps.settings() != settingsOf(cfg) {
		return nil, false
	}
	return overNodes(cfg, ps.nodes()), true
}
