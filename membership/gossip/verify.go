package gossip

import (
	"net"
	"time"

	"github.com/hashicorp/memberlist"
)

// A member found dead by this one alone may be alive: this member's probes
// went unanswered (it was busy itself, or cut off from that one), its
// suspicion never reached the suspect, or the suspect's refutation passed
// this member by while it was not listening. The others keep the member;
// this one drops it, and memberlist tells it otherwise only at its next
// exchange of the whole state with a member that has it, up to 30 s later
// (a proxy missed a node for 11.7 s so, on a busy machine). So a member
// asks the one it found dead for its state, each rejoin interval for as
// long as a suspect may take to refute (the failure detector's upper
// bound): a live one answers with its state, or refutes the death this
// member sends and answers the next time, and is taken back; a dead one
// does not answer, and is asked no more once that time is up.

// verifying is a member found dead, to ask until a time.
type verifying struct {
	addr  string
	until time.Time
}

// toVerify is told of a member found dead or gone, n; p.mu is held.
func (p *Pool) toVerify(n *memberlist.Node) {
	if n.Name == p.name || p.closed {
		return
	}
	_, hi := p.cfg.FailureTimeout(len(p.members) + 1)
	p.verify[n.Name] = verifying{addr: n.Address(), until: time.Now().Add(hi)}
}

// verifyDeaths asks each member found dead that answers a ping for its
// state, from the rejoin loop. The ping comes first, waiting no longer
// than a probe does, so that a member that does not answer - dead, or
// stopped with its sockets open - never holds the loop for memberlist's
// stream timeout.
func (p *Pool) verifyDeaths() {
	now := time.Now()
	type ask struct{ name, addr string }
	var asks []ask
	p.mu.Lock()
	for name, v := range p.verify {
		if _, back := p.members[name]; back || now.After(v.until) {
			delete(p.verify, name)
			continue
		}
		asks = append(asks, ask{name, v.addr})
	}
	p.mu.Unlock()
	for _, a := range asks {
		udp, err := net.ResolveUDPAddr("udp", a.addr)
		if err != nil {
			continue
		}
		if _, err := p.ml.Ping(a.name, udp); err == nil {
			_, _ = p.ml.Join([]string{a.addr})
		}
	}
}
