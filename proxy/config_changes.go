package proxy

import (
	"fmt"
	"slices"
	"strings"
)

// checkChanges checks warm and sweep.
func (p *PoolConfig) checkChanges(bad badSetting) error {
	w := p.Warm
	switch {
	case w.Window < 0:
		return bad("warm.window", "must not be negative (got %v)", w.Window)
	case w.Depth < 0 || w.Depth > maxWarmDepth:
		return bad("warm.depth", "want 1 to %d previous placements (got %d)", maxWarmDepth, w.Depth)
	case w.Quiet < 0:
		return bad("warm.quiet", "must not be negative (got %d)", w.Quiet)
	case w.on() && p.Replicas > 1:
		return bad("warm.enabled", "warm changes are not combined with replicas: a read of a key a change moved would fall back "+
			"to one previous copy while the others kept their own; set warm: {enabled: false}, or replicas: 1")
	case p.Sweep.Rate < 0:
		return bad("sweep.rate", "must not be negative (got %d)", p.Sweep.Rate)
	}
	known := map[string]bool{"*": true}
	for _, s := range p.Servers {
		known[s.RingName()], known[s.Addr()] = true, true
	}
	for _, e := range p.Sweep.Exclusive {
		if !known[e] {
			return bad("sweep.exclusive", "%q is not a server's name or address (or \"*\" for all of them)", e)
		}
	}
	return nil
}

// explainChanges writes what a change of placement does to the pool.
func (p *PoolConfig) explainChanges(b *strings.Builder) {
	if p.Warm.on() {
		fmt.Fprintf(b, "  changes: warm: for up to %d ms (or until %d fallbacks in a row find nothing) a miss is read from the key's previous server, through up to %d previous placements, and copied over; writes and deletes also delete the previous copy\n",
			p.Warm.Window.Milliseconds(), p.Warm.Quiet, p.Warm.Depth)
	} else {
		fmt.Fprintf(b, "  changes: cold: a key a change moves misses at its new server, as under nutcracker\n")
	}
	if len(p.Sweep.Exclusive) == 0 {
		fmt.Fprintf(b, "  sweep: none (no server marked exclusive): copies a change leaves behind stay until they expire\n")
		return
	}
	on := "on servers " + strings.Join(p.Sweep.Exclusive, ", ")
	if slices.Contains(p.Sweep.Exclusive, "*") {
		on = "on every server"
	}
	fleet := ""
	if p.Membership != nil {
		fleet = "; with servers from a membership source, only once every proxy of kolco.admin_peers reports the same placement (fingerprint), else the sweep waits"
	}
	fmt.Fprintf(b, "  sweep: after each change, the copies %s that they no longer own are deleted, at most %d a second per server%s\n",
		on, p.Sweep.Rate, fleet)
}
