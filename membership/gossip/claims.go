package gossip

import "github.com/hashicorp/memberlist"

// A node's member restarted at another address (a new port, a new pod
// address) claims its name there while the pool may still hold the name
// alive at the old address: the members have not found the old one dead
// yet. memberlist refuses such a claim as a conflict, and offers it to no
// one again by itself: the claimant's announcements are spent by the time
// the old address is found dead, and the next exchange of the whole state
// is up to 30 s away, so that the node went missing that long (measured:
// 34-35 s, from a kill and an immediate restart). A member that refused a
// claim therefore keeps it, and once it has found the old address dead
// asks the claimant for its state, which it then takes: the node is back
// in every view within the failure detector's time.

// claim is a name claimed at addr while this member held it at old.
type claim struct{ old, addr string }

// conflicts keeps the claims memberlist refuses. memberlist calls it with
// its own lock held, so it must not call back into it.
type conflicts Pool

// NotifyConflict keeps other's claim of a name this member holds alive at
// existing's address; a claim of this member's own name is memberlist's
// to report.
func (c *conflicts) NotifyConflict(existing, other *memberlist.Node) {
	p := (*Pool)(c)
	if existing.Name == p.name {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claims[other.Name] = claim{old: existing.Address(), addr: other.Address()}
}

// claimFreed is told of a member found dead or gone, n: a claim of its
// name elsewhere is to be asked for its state; p.mu is held.
func (p *Pool) claimFreed(n *memberlist.Node) {
	c, ok := p.claims[n.Name]
	if !ok {
		return
	}
	delete(p.claims, n.Name)
	if c.old != n.Address() || p.closed {
		return
	}
	p.pending = append(p.pending, c.addr)
	select {
	case p.poke <- struct{}{}:
	default: // the rejoin loop is poked already
	}
}

// askClaimants exchanges the whole state with each claimant pending: the
// old address found dead, memberlist takes the claim (it lets a dead
// member's name be reclaimed at once) and tells the pool.
func (p *Pool) askClaimants() {
	p.mu.Lock()
	addrs := p.pending
	p.pending = nil
	p.mu.Unlock()
	if len(addrs) > 0 {
		_, _ = p.ml.Join(addrs) // a claimant gone meanwhile is found dead again
	}
}
