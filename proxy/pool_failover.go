package proxy

import (
	"sync"
	"time"
)

// Failover is a server whose address its membership source changed: a
// Sentinel failover, its primary replaced by a promoted replica (or a
// server moved in etcd, DNS or a file). The server keeps its name and its
// keys; requests go to the new address from then on.
type Failover struct {
	Server string    `json:"server"`
	From   string    `json:"from"`
	To     string    `json:"to"`
	At     time.Time `json:"at"`
	// Unavailable is the seconds from the first failure of the server the
	// proxy saw at its old address, in the run of failures that led to
	// the change, to the change; 0 when it saw none (a failover made while
	// the old primary served, as SENTINEL FAILOVER makes one).
	Unavailable float64 `json:"unavailable_seconds"`
}

// maxFailovers is how many of a pool's latest failovers it keeps.
const maxFailovers = 20

// failovers are a pool's failovers: the latest ones, and a count per
// server. A pool's figures survive its replacement.
type failovers struct {
	mu     sync.Mutex
	latest []Failover
	count  map[string]int
}

func (f *failovers) note(fo Failover) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.count == nil {
		f.count = map[string]int{}
	}
	f.count[fo.Server]++
	f.latest = append(f.latest, fo)
	if len(f.latest) > maxFailovers {
		f.latest = f.latest[len(f.latest)-maxFailovers:]
	}
}

// snapshot returns the latest failovers, oldest first, and the counts.
func (f *failovers) snapshot() ([]Failover, map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	counts := make(map[string]int, len(f.count))
	for k, v := range f.count {
		counts[k] = v
	}
	return append([]Failover(nil), f.latest...), counts
}

// noteRepoints records each server of p that old, the pool p replaced,
// had at another address, and logs it.
func (p *pool) noteRepoints(old *pool) {
	now := time.Now()
	for _, b := range p.backends {
		ob := old.backendNamed(b.name())
		if ob == nil || ob.addr == b.addr {
			continue
		}
		fo := Failover{Server: b.name(), From: ob.addr, To: b.addr, At: now}
		if seen := ob.health.observedNow(); seen.failing > 0 {
			fo.Unavailable = now.Sub(seen.failingSince).Seconds()
		}
		p.stats.failovers.note(fo)
		p.log.Info("server repointed by the membership source: a failover", "server", fo.Server, "from", fo.From, "to", fo.To,
			"unavailable", time.Duration(fo.Unavailable*float64(time.Second)).Round(time.Millisecond))
	}
}

// backendNamed returns the pool's server of that name, or nil.
func (p *pool) backendNamed(name string) *backend { return backendNamed(p.backends, name) }

// backendNamed returns the server of that name among backends, or nil.
func backendNamed(backends []*backend, name string) *backend {
	for _, b := range backends {
		if b.name() == name {
			return b
		}
	}
	return nil
}

// backendAt returns the server at addr among backends, or nil.
func backendAt(backends []*backend, addr string) *backend {
	for _, b := range backends {
		if b.addr == addr {
			return b
		}
	}
	return nil
}
