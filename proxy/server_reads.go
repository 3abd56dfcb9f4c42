package proxy

import "time"

// adminReads is what the admin wing - the admin endpoint's handlers, the
// status page, the stats port and the metrics collectors - reads of the
// running server: each read a func that takes the server's lock itself,
// or a piece it shares with the server, so that none of them holds the
// server or reaches its lock.
type adminReads struct {
	// entries returns the pools the server runs now, with their sources,
	// in name order (Server.poolEntries).
	entries func() []poolEntry
	// config returns the configuration the server runs (Server.Config).
	config func() *Config
	// rewriteState writes the state file of the pools the server runs,
	// for a change an operator made (a store's move paused) that a
	// restart must keep (Server.rewriteState).
	rewriteState func()
	// fleet is what the page and /v1/membership ask the peers with.
	fleet *sweepFleet
	// met, budget and certs are the figures the metrics report.
	met    *metrics
	budget *budget
	certs  *certRegistry
}

// poolEntry is a pool with its source, if any, and since when it places
// as it does.
type poolEntry struct {
	p     *pool
	ps    *poolSource
	since time.Time
}

// pools returns the pools the server runs now, in name order.
func (a *adminReads) pools() []*pool {
	var ps []*pool
	for _, e := range a.entries() {
		ps = append(ps, e.p)
	}
	return ps
}
