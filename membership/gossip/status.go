package gossip

import (
	"bytes"
	"io"
	"log"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/memberlist"
)

// Status is what a member knows of its pool, for an operator: who is in
// it, which members did not answer its probes, and how the failure
// detector has fared. See [Pool.Status].
type Status struct {
	// Name and Addr are this member's name and gossip address.
	Name, Addr string
	// Alone is true while the member has not joined its pool (see
	// [Pool.Read]); JoinError says why.
	Alone     bool
	JoinError string
	// Health is memberlist's health score of this member (Lifeguard's
	// local health): 0 while it gets its own probes' answers in time; up
	// to 7 while it misses them, when it probes more slowly and its own
	// suspicions of others are the doubtful ones (a busy machine).
	Health int
	// Members are the live members as this one sees them, itself
	// included, by name.
	Members []MemberStatus
	// Suspected counts the times a probe by this member went unanswered
	// and it suspected the member probed; Refuted the times this member
	// was suspected or declared dead by another and answered that it
	// lives; Deaths the members it saw found dead or leave; Returns the
	// members it saw come back after that (a restart, or a live member
	// wrongly found dead).
	Suspected, Refuted, Deaths, Returns int64
	// LastDeath is when a member was last found dead or left; zero if
	// none was.
	LastDeath time.Time
}

// MemberStatus is a member of the pool as [Status] lists it.
type MemberStatus struct {
	// Name is the member's name in the pool, Addr its gossip address.
	Name, Addr string
	// Role is RoleNode or RoleObserver; empty for metadata refused.
	Role string
	// Drained is true for a node that takes no keys.
	Drained bool
	// Suspect is true while the member has not answered this member's
	// last probe of it (memberlist suspects it; it is found dead unless it
	// refutes that in time).
	Suspect bool
}

// Status returns what the member knows of its pool now.
func (p *Pool) Status() Status {
	health := p.ml.GetHealthScore()
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Status{Name: p.name, Addr: p.addr, Alone: p.alone, Health: health,
		Suspected: p.suspected, Refuted: p.refuted, Deaths: p.deaths, Returns: p.returns, LastDeath: p.lastDeath}
	if p.alone && p.joinErr != nil {
		st.JoinError = p.joinErr.Error()
	}
	for name, m := range p.members {
		ms := MemberStatus{Name: name, Addr: m.addr, Suspect: p.suspects[name]}
		if meta, err := ParseMeta(m.meta); err == nil {
			ms.Role, ms.Drained = meta.Role, meta.Drained
		}
		st.Members = append(st.Members, ms)
	}
	slices.SortFunc(st.Members, func(a, b MemberStatus) int { return strings.Compare(a.Name, b.Name) })
	return st
}

// pings clears a suspicion when the suspect answers a later probe.
type pings Pool

func (pg *pings) AckPayload() []byte { return nil }
func (pg *pings) NotifyPingComplete(other *memberlist.Node, _ time.Duration, _ []byte) {
	p := (*Pool)(pg)
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.suspects, other.Name)
}

// logWatch reads memberlist's log lines on their way to Config.Log for
// what memberlist tells no delegate: that this member suspects another
// (its probe went unanswered) and that it refuted a suspicion or a death
// of itself. The lines are memberlist's (v0.7), which a test holds.
type logWatch struct {
	p   *Pool
	out io.Writer
}

var (
	suspectLine = []byte("memberlist: Suspect ")
	refuteLines = [][]byte{[]byte("memberlist: Refuting a suspect message"), []byte("memberlist: Refuting a dead message")}
)

func (w *logWatch) Write(line []byte) (int, error) {
	p := w.p
	if _, after, ok := bytes.Cut(line, suspectLine); ok {
		if name, _, ok := bytes.Cut(after, []byte(" has failed")); ok {
			p.mu.Lock()
			if _, live := p.members[string(name)]; live {
				p.suspects[string(name)] = true
			}
			p.suspected++
			p.mu.Unlock()
		}
	}
	for _, l := range refuteLines {
		if bytes.Contains(line, l) {
			p.mu.Lock()
			p.refuted++
			p.mu.Unlock()
		}
	}
	return w.out.Write(line)
}

// logger returns memberlist's logger: its lines watched, then written to
// out.
func (p *Pool) logger(out io.Writer) *log.Logger {
	return log.New(&logWatch{p: p, out: out}, "", log.LstdFlags)
}
