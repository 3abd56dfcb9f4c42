package gossip

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/membership"
)

// ErrRefused is wrapped while a member cannot join because the seeds that
// answer refuse the exchange of the pool's state with it, or it theirs: the
// members' keys (Config.Keys, a key file) or labels differ, most often.
var ErrRefused = errors.New("gossip: refused by the seeds")

// aloneErr says why the view is stale while the member is alone.
func (p *Pool) aloneErr() error {
	switch {
	case errors.Is(p.joinErr, ErrRefused):
		return fmt.Errorf("%w: %w", membership.ErrUnreachable, p.joinErr)
	case p.joinErr != nil:
		return fmt.Errorf("%w: gossip: alone, joining %v: %w", membership.ErrUnreachable, p.seeds, p.joinErr)
	case len(p.members) > 1:
		return fmt.Errorf("%w: gossip: joining %v: the members reached have not joined the pool themselves yet", membership.ErrUnreachable, p.seeds)
	}
	return fmt.Errorf("%w: gossip: alone, joining %v", membership.ErrUnreachable, p.seeds)
}

// join tries the seeds once if the member is alone, and the members it
// knows of: those it met through a seed that was not in the pool either
// (nodes that have only observers for seeds form the pool by meeting one
// another so).
func (p *Pool) join() {
	p.mu.Lock()
	alone, merges := p.alone, p.merges
	targets := slices.Clone(p.seeds)
	for name, m := range p.members {
		if name != p.name && m.addr != "" && !slices.Contains(targets, m.addr) {
			targets = append(targets, m.addr)
		}
	}
	p.mu.Unlock()
	if !alone {
		return
	}
	n, err := p.ml.Join(targets)
	if err != nil && n == 0 {
		err = p.joinError(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.joinErr = err
	if n > 0 && p.merges == merges && p.alone && len(p.members) > 1 {
		// The seeds told nothing of their own state (a kolco before
		// joinState): taken, as then, for the pool.
		p.settle()
	}
}

// settle ends the member's being alone and publishes its view of the
// pool; p.mu is held.
func (p *Pool) settle() {
	p.alone = false
	p.recompute()
	p.signal() // the followers learn that the view is current again
}

// merged is told the state of the member whose pool state was just
// merged into this one's, whole (memberlist merges it a member at a time,
// and calls the delegate's MergeRemoteState once it has). A member alone
// takes that state for the pool's, and publishes a view again, once it
// comes from a member in the pool, or, for a node member, from another
// node: nodes started together each with the others as seeds form the
// pool that way. An observer joined through a seed that is itself alone
// stays alone: the seed's state is not the pool's, and a view of the seed
// alone would place every key on it.
func (p *Pool) merged(remote joinState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.merges++
	if !p.alone || len(p.members) <= 1 || p.closed {
		return
	}
	if remote.joined || remote.node && p.cfg.meta().Role == RoleNode {
		p.settle()
	}
}

// joinState is what a member tells another of itself in a push-pull, the
// exchange of the whole pool state by which members join and re-sync:
// whether it is in the pool (not alone) and whether it is a node.
type joinState struct{ joined, node bool }

// joinStateVersion is the first byte of the encoding; a state of another
// version is taken for a member in the pool, as a kolco member that tells
// nothing is.
const joinStateVersion = 1

func (j joinState) encode() []byte {
	b := []byte{joinStateVersion, 0}
	if j.joined {
		b[1] |= 1
	}
	if j.node {
		b[1] |= 2
	}
	return b
}

func parseJoinState(b []byte) joinState {
	if len(b) < 2 || b[0] != joinStateVersion {
		return joinState{joined: true}
	}
	return joinState{joined: b[1]&1 != 0, node: b[1]&2 != 0}
}

// rejoin tries the seeds every rejoin interval while the member is alone.
func (p *Pool) rejoin() {
	defer close(p.done)
	t := time.NewTicker(p.cfg.rejoin())
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.join()
			p.verifyDeaths()
		case <-p.poke:
			p.askClaimants()
		}
	}
}

// joinError says why no seed could be joined, from memberlist's error
// (one per seed): [ErrRefused] when a seed accepts connections, so that
// the exchange itself failed - memberlist's words then say how, such as
// "no installed keys could decrypt the message" - else memberlist's
// words alone, on one line.
func (p *Pool) joinError(err error) error {
	var words []string
	if m, ok := err.(interface{ WrappedErrors() []error }); ok {
		for _, e := range m.WrappedErrors() {
			words = append(words, e.Error())
		}
	} else {
		words = append(words, err.Error())
	}
	var answering []string
	for _, s := range p.seeds {
		if c, err := net.DialTimeout("tcp", s, time.Second); err == nil {
			c.Close()
			answering = append(answering, s)
		}
	}
	if len(answering) == 0 {
		return errors.New(strings.Join(words, "; "))
	}
	for i, w := range words { // "failed to join 10.0.0.1:7946: ...": the seeds are named already
		if _, after, ok := strings.Cut(w, ": "); ok && strings.HasPrefix(w, "failed to join ") {
			words[i] = after
		}
	}
	return fmt.Errorf("%w: %s %s but the exchange fails: %s (does every member have the same key file and label?)", ErrRefused,
		strings.Join(answering, ", "), plural(len(answering), "answers", "answer"), strings.Join(slices.Compact(words), "; "))
}

func plural(n int, one, more string) string {
	if n == 1 {
		return one
	}
	return more
}

// JoinError returns why the member could not join its seeds at its last
// attempt, while it is alone: an error wrapping [ErrRefused] when they
// answer and refuse it; nil once it has joined, or when it has no seeds.
func (p *Pool) JoinError() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.alone {
		return nil
	}
	return p.joinErr
}
