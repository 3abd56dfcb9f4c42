package gossip

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
)

// ErrClosed is returned by the methods of a [Pool] after [Pool.Close].
var ErrClosed = errors.New("gossip: member closed")

// Pool is this process's membership of a gossip pool, and a
// [membership.Source] over the pool's members as it sees them. It owns
// memberlist's goroutines and sockets and one goroutine of its own (that
// rejoins the seeds when the member is alone) from [Join] until
// [Pool.Close].
type Pool struct {
	cfg   Config
	ml    *memberlist.Memberlist
	seeds []string
	name  string // this member's name in the pool
	stop  chan struct{}
	done  chan struct{}
	poke  chan struct{} // wakes the rejoin loop for claims to take (see claims.go)

	mu      sync.Mutex // guards everything below
	meta    []byte     // this member's encoded metadata
	drained bool
	members map[string]member // the live members by name, this one included
	view    membership.Version
	bad     error // why a member's metadata was refused; nil when none was
	// alone is true while the member has seeds and has not merged the
	// state of a member in the pool (see merged), and again once it has
	// lost every other member: its view is held meanwhile.
	alone   bool
	merges  int              // the pool states merged (see merged)
	joinErr error            // the last failure to join the seeds
	claims  map[string]claim // names claimed at another address, by name
	pending []string         // claimants to ask for their state

	// What Status reports besides the members.
	addr                                string
	verify                              map[string]verifying // members found dead, to ask (see verify.go)
	suspects                            map[string]bool      // members whose last probe by this one went unanswered
	gone                                map[string]bool      // members found dead or gone, until they come back
	suspected, refuted, deaths, returns int64
	lastDeath                           time.Time
	changed                             chan struct{}
	closed                              bool
	ready                               bool // memberlist is created: events may recompute
}

// Join starts a member of the pool cfg describes: it binds cfg.Bind,
// tries the seeds once, and keeps trying them in the background while it
// is alone, so that members started together find each other whatever
// their order. The error wraps [membership.ErrBadConfig] for a bad
// configuration, or is memberlist's (an address in use).
func Join(cfg Config) (*Pool, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg.Keys = slices.Clone(cfg.Keys)
	meta := cfg.meta()
	enc, _ := EncodeMeta(meta) // checked above
	mc := cfg.memberlist()
	host, port, _ := splitAddr(cfg.Bind)
	mc.BindAddr, mc.BindPort = host, port
	mc.AdvertiseAddr, mc.AdvertisePort = host, port
	if cfg.Advertise != "" {
		mc.AdvertiseAddr, mc.AdvertisePort, _ = splitAddr(cfg.Advertise)
	}
	mc.Name = memberName(cfg.Name, meta, mc)
	if len(cfg.Keys) > 0 {
		kr, err := memberlist.NewKeyring(cfg.Keys, cfg.Keys[0])
		if err != nil {
			return nil, fmt.Errorf("%w: gossip: keys: %w", membership.ErrBadConfig, err)
		}
		mc.Keyring = kr
	}
	p := &Pool{cfg: cfg, meta: enc, drained: meta.Drained, members: map[string]member{},
		changed: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}), poke: make(chan struct{}, 1),
		name: mc.Name, claims: map[string]claim{}, verify: map[string]verifying{}, suspects: map[string]bool{}, gone: map[string]bool{},
		// Alone from the start: memberlist answers push-pulls as soon as
		// it listens, before Join returns, and a member that said it was
		// in the pool then was taken for the pool by one joining it.
		alone: len(cfg.seeds(cfg.Bind, cfg.Advertise)) > 0}
	mc.Delegate = (*delegate)(p)
	mc.Events = (*events)(p)
	mc.Conflict = (*conflicts)(p)
	mc.Ping = (*pings)(p)
	mc.Logger, mc.LogOutput = p.logger(mc.LogOutput), nil
	if cfg.transport != nil {
		nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{host}, BindPort: port, Logger: mc.Logger})
		if err != nil {
			return nil, fmt.Errorf("gossip: member %s at %s: %w", mc.Name, cfg.Bind, err)
		}
		mc.Transport = cfg.transport(nt)
	}
	ml, err := memberlist.Create(mc)
	if err != nil {
		return nil, fmt.Errorf("gossip: member %s at %s: %w", mc.Name, cfg.Bind, err)
	}
	p.ml = ml
	self := ml.LocalNode().Address()
	p.mu.Lock()
	p.addr = self
	p.seeds = cfg.seeds(self, cfg.Bind, cfg.Advertise)
	p.alone = len(p.seeds) > 0
	p.ready = true
	p.recompute()
	p.mu.Unlock()
	p.join()
	go p.rejoin()
	return p, nil
}

// memberName returns the name of the member of meta that memberlist's mc
// advertises: a node's ID; else the name given; else, for an observer,
// "observer@" and its advertised address, or, without a port, its host
// and a random suffix.
func memberName(name string, meta Meta, mc *memberlist.Config) string {
	switch {
	case meta.Role == RoleNode:
		return meta.Node.ID
	case name == "" && mc.AdvertisePort != 0:
		return "observer@" + net.JoinHostPort(mc.AdvertiseAddr, strconv.Itoa(mc.AdvertisePort))
	case name == "":
		var b [6]byte
		_, _ = rand.Read(b[:])
		return "observer@" + mc.AdvertiseAddr + "/" + hex.EncodeToString(b[:])
	}
	return name
}

// Name returns the member's name in the pool.
func (p *Pool) Name() string { return p.ml.LocalNode().Name }

// Addr returns the "host:port" the others reach the member at: the one
// to give as a seed.
func (p *Pool) Addr() string { return p.ml.LocalNode().Address() }

// Members returns how many members the pool has as this member sees it,
// itself and observers included.
func (p *Pool) Members() int { return p.ml.NumMembers() }

// Unordered implements [membership.Unordered]: gossip gives no order of
// changes that every member shares.
func (p *Pool) Unordered() string {
	return "gossip gives each member its own order of joins and failures, with no agreed sequence of changes (use etcd, which keeps the placement state beside the nodes)"
}

// Read returns the node set as this member sees it now. The error wraps
// [membership.ErrUnreachable] while the member is alone and has seeds to
// join (it has not joined yet - no member in the pool has answered - or
// it lost every other member), or is [ErrClosed].
func (p *Pool) Read(ctx context.Context) (membership.Version, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return membership.Version{}, ErrClosed
	case p.alone:
		return membership.Version{}, p.aloneErr()
	}
	v := p.view
	v.Resync = true
	return v, ctx.Err()
}

// Follow implements [membership.Source]: it yields this member's view of
// the pool each time the node set changes (an observer joining or leaving
// changes nothing). While the member is alone with seeds to join it keeps
// the last view and reports it stale, rather than take every other member
// for dead: a member cut off from the pool is more likely than a pool
// that died around it. It returns ctx's error, or [ErrClosed].
func (p *Pool) Follow(ctx context.Context, r membership.Reporter) error {
	var last int64
	tick := time.NewTicker(p.cfg.rejoin())
	defer tick.Stop()
	for {
		p.mu.Lock()
		v, bad, alone, closed, changed := p.view, p.bad, p.alone, p.closed, p.changed
		var err error
		if alone {
			err = p.aloneErr()
		}
		p.mu.Unlock()
		switch {
		case closed:
			return ErrClosed
		case alone:
			r.Failed(err)
		case v.Revision > last:
			v.Resync = last == 0
			if err := r.Yield(ctx, v); err != nil {
				return err
			}
			last = v.Revision
			if bad != nil {
				r.Answered(bad)
			}
		default:
			r.Answered(bad)
		}
		select {
		case <-changed:
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// SetDrained changes whether this member's node takes keys, and tells the
// pool. The error wraps [membership.ErrBadConfig] for an observer, or is
// [ErrClosed], or memberlist's when the update could not be sent within
// the leave timeout.
func (p *Pool) SetDrained(drained bool) error {
	p.mu.Lock()
	m := p.cfg.meta()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	if m.Role != RoleNode {
		p.mu.Unlock()
		return fmt.Errorf("%w: gossip: an observer has no node to drain", membership.ErrBadConfig)
	}
	m.Drained = drained
	p.meta, _ = EncodeMeta(m)
	p.drained = drained
	p.mu.Unlock()
	return p.ml.UpdateNode(p.cfg.leave())
}

// Close leaves the pool gracefully (the others drop this member at once,
// without waiting for the failure detector), within the leave timeout,
// and releases the sockets. It returns the leave's error, if any; calling
// it again returns nil.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.signal()
	p.mu.Unlock()
	close(p.stop)
	<-p.done
	err := p.ml.Leave(p.cfg.leave())
	if e := p.ml.Shutdown(); err == nil {
		err = e
	}
	return err
}

// signal wakes the followers; p.mu is held.
func (p *Pool) signal() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// recompute derives the view from the members' metadata, giving it a new
// revision when the node set changed; p.mu is held. A member whose
// metadata is refused is left out, and the first refusal (by name) kept
// as the reason the view is not whole.
func (p *Pool) recompute() {
	var nodes, drained []kolco.Node
	var bad error
	badName := ""
	for name, mb := range p.members {
		m, err := ParseMeta(mb.meta)
		if err == nil && m.Role == RoleNode && m.Node.ID != name {
			err = fmt.Errorf("%w: gossip: %w (%q)", membership.ErrBadContent, errNotNode, m.Node.ID)
		}
		if err != nil {
			if bad == nil || name < badName {
				bad, badName = fmt.Errorf("member %q: %w", name, err), name
			}
			continue
		}
		switch {
		case m.Role != RoleNode:
		case m.Drained:
			drained = append(drained, m.Node)
		default:
			nodes = append(nodes, m.Node)
		}
	}
	membership.SortNodes(nodes)
	membership.SortNodes(drained)
	// Alone again once every other member is gone; only settle ends it.
	alone := p.alone || len(p.seeds) > 0 && len(p.members) <= 1
	changed := alone != p.alone || fmt.Sprint(bad) != fmt.Sprint(p.bad)
	p.alone, p.bad = alone, bad
	if !alone && (p.view.Revision == 0 || !slices.Equal(nodes, p.view.Nodes) || !slices.Equal(drained, p.view.Drained)) {
		p.view = membership.Version{Revision: p.view.Revision + 1, Nodes: nodes, Drained: drained}
		changed = true
	}
	if changed {
		p.signal()
	}
}

// maxGone bounds the names of members gone that a pool remembers, to
// count those that come back.
const maxGone = 1024

// member is what the pool knows of a live member: its metadata and the
// address it gossips at.
type member struct {
	meta []byte
	addr string
}

// delegate gives memberlist this member's metadata and its joinState;
// the pool carries no user messages of its own.
type delegate Pool

func (d *delegate) NodeMeta(limit int) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.meta[:min(len(d.meta), limit)] // EncodeMeta kept it under the limit
}
func (d *delegate) NotifyMsg([]byte)                           {}
func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }

// LocalState is this member's joinState, sent with its pool state.
func (d *delegate) LocalState(join bool) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return joinState{joined: !d.alone, node: d.cfg.meta().Role == RoleNode}.encode()
}

// MergeRemoteState follows the merge of another member's pool state.
func (d *delegate) MergeRemoteState(buf []byte, join bool) { (*Pool)(d).merged(parseJoinState(buf)) }

// events keeps the pool's members as memberlist reports them. memberlist
// calls it with its own lock held, so it must not call back into it.
type events Pool

func (e *events) NotifyJoin(n *memberlist.Node)   { e.set(n.Name, n.Address(), n.Meta) }
func (e *events) NotifyUpdate(n *memberlist.Node) { e.set(n.Name, n.Address(), n.Meta) }
func (e *events) NotifyLeave(n *memberlist.Node) {
	p := (*Pool)(e)
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.members, n.Name)
	delete(p.suspects, n.Name)
	p.claimFreed(n)
	p.toVerify(n)
	p.deaths++
	p.lastDeath = time.Now()
	if len(p.gone) < maxGone {
		p.gone[n.Name] = true
	}
	if p.ready {
		p.recompute()
	}
}

func (e *events) set(name, addr string, meta []byte) {
	p := (*Pool)(e)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.members[name] = member{meta: slices.Clone(meta), addr: addr}
	if p.gone[name] {
		delete(p.gone, name)
		p.returns++
	}
	if p.ready {
		p.recompute()
	}
}
