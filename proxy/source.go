package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
)

// A pool on a membership source (see [Membership]) is served by the same
// path as a reload: each version the source gives becomes the pool's
// servers, and the pool is replaced by one that follows the placement of
// the one it replaces (placing.follow), so that a change is a change - its
// previous placement kept beside it - and never a rebuild for kolco's
// distributions. The placement itself is the one a membership.Follower
// keeps for the source: the same in every process that follows the store,
// for history-dependent algorithms too when the store keeps their state,
// so that the fingerprints of a fleet's proxies are equal exactly when they
// agree. ketama and modula are rebuilt over each version's servers, as
// nutcracker would build them.

// sourceKey is what a pool's source is started for: a reload keeps the
// running source while it is the same.
type sourceKey struct {
	membership Membership
	dir        string
	set        settings
	twemproxy  bool
	hash       string
	hashTag    string
	// masters are a Sentinel pool's servers, by name and weight: the
	// masters its source asks for, where other sources' servers are only
	// where they start from.
	masters string
}

func keyOf(pc *PoolConfig, dir string) sourceKey {
	k := sourceKey{membership: *pc.Membership, dir: dir, set: settingsOf(pc), twemproxy: isTwemproxy(pc),
		hash: pc.Hash, hashTag: pc.HashTag}
	if pc.Membership.Sentinel != nil {
		for _, s := range pc.Servers {
			k.masters += fmt.Sprintf("%s:%d ", s.Name, s.Weight)
		}
	}
	return k
}

// poolSource follows one pool's membership source, with a
// membership.Follower for kolco's distributions and a membership.Watcher
// for ketama and modula, and hands each new view to the server.
type poolSource struct {
	name     string
	key      sourceKey
	desc     string
	log      *slog.Logger
	f        *membership.Follower
	w        *membership.Watcher
	closeSrc func() error
	// sentinel is the source when it is Sentinel's: it can be asked
	// again at once, and knows how long the Sentinels take to fail a
	// primary over.
	sentinel interface {
		Nudge()
		DownAfter(master string) time.Duration
	}
	// gossip is the source of a gossip pool, which reports the pool.
	gossip gossipStatus
	// base is the pool's configuration as the file gives it (defaults
	// set); guarded by the server's mu.
	base *PoolConfig
	// placeholder marks a source whose initial nodes are the pool's
	// configured servers, which no source named (see
	// sourceView.placeholder).
	placeholder bool

	view    atomic.Pointer[sourceView] // the newest version
	applied atomic.Int64               // versions the pool was changed to
	changed chan struct{}              // signalled when view changes
	ctx     context.Context            // done when the source is closed
	cancel  context.CancelFunc
	running bool          // run was started: done will close
	done    chan struct{} // closed when run ends
	listed  chan struct{} // closed when the watcher loop ends (ketama, modula)

	mu      sync.Mutex  // serializes the writers of view; guards refused and noted
	refused error       // why the newest view is not served; nil when it is
	noted   *sourceView // the view whose refusal was logged
}

// newPoolSource starts following the source of pc, the pool name of a
// configuration read from a file in dir. Its first view is initial, the
// nodes the pool places until the source's first version, placed by
// initialState for a history-dependent distribution (nil: afresh); env is what
// the server gives the source besides the configuration. The error is a
// [*ConfigError] for the pool's membership key.
func newPoolSource(name string, pc *PoolConfig, dir string, initial []kolco.Node, initialState []byte, env sourceEnv, log *slog.Logger) (*poolSource, error) {
	src, closeSrc, err := pc.Membership.source(name, dir, pc.Servers, env)
	if err != nil {
		return nil, err
	}
	sentinel, _ := src.(interface {
		Nudge()
		DownAfter(string) time.Duration
	})
	gs, _ := src.(gossipStatus)
	src = loggedSource(src, log.With("pool", name))
	ctx, cancel := context.WithCancel(context.Background())
	ps := &poolSource{name: name, key: keyOf(pc, dir), desc: pc.Membership.String(), log: log.With("pool", name), sentinel: sentinel, gossip: gs,
		closeSrc: closeSrc, base: pc, placeholder: env.placeholder, changed: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{})}
	if isTwemproxy(pc) {
		ps.publish(ps.listView(0, initial, nil))
		ps.w = membership.Watch(ctx, src)
		ps.listed = make(chan struct{})
		go ps.watchList()
		return ps, nil
	}
	opts, err := settingsOf(pc).options()
	if err == nil {
		ps.f, err = membership.Follow(ctx, src, membership.FollowConfig{
			Algorithm: pc.Distribution, Options: opts, Initial: initial, InitialState: initialState,
			WriteState: pc.Membership.Etcd != nil && pc.Membership.Etcd.WriteState,
			OnChange:   func(_, next *membership.View) { ps.publish(ps.kolcoView(next)) },
		})
	}
	if err != nil {
		cancel()
		_ = closeSrc()
		return nil, placementError(name, err)
	}
	ps.publish(ps.kolcoView(ps.f.View()))
	return ps, nil
}

// publish makes v the newest view unless a newer one is there, and
// signals the server.
func (ps *poolSource) publish(v *sourceView) {
	ps.mu.Lock()
	if cur := ps.view.Load(); cur != nil && cur.revision >= v.revision {
		ps.mu.Unlock()
		return
	}
	ps.view.Store(v)
	ps.mu.Unlock()
	select {
	case ps.changed <- struct{}{}:
	default: // a signal is pending: the server takes the newest view
	}
}

// kolcoView returns the view of a follower's view.
func (ps *poolSource) kolcoView(v *membership.View) *sourceView {
	nodes := v.Placement.Nodes()
	return &sourceView{revision: v.Revision, nodes: nodes, drained: nodeIDs(v.Drained), fingerprint: v.Fingerprint, sentinel: ps.sentinel,
		shared: v.Shared, lay: &layout{settings: ps.key.set, p: v.Placement, nodes: nodes, fingerprint: v.Fingerprint},
		err: checkNodes(nodes, false), placeholder: ps.placeholder && v.Revision == 0}
}

// listView returns the view of a version for ketama and modula.
func (ps *poolSource) listView(rev int64, nodes []kolco.Node, drained []kolco.Node) *sourceView {
	sv := &sourceView{revision: rev, nodes: nodes, drained: nodeIDs(drained), shared: true, err: checkNodes(nodes, true), sentinel: ps.sentinel,
		placeholder: ps.placeholder && rev == 0}
	if sv.err == nil {
		sv.fingerprint = twemproxyFingerprint(ps.key.set.Distribution, ps.key.hash, ps.key.hashTag, nodes)
	}
	return sv
}

// watchList turns the watcher's versions into views.
func (ps *poolSource) watchList() {
	defer close(ps.listed)
	for v := range ps.w.Versions() {
		ps.publish(ps.listView(v.Revision, v.Nodes, v.Drained))
	}
}

// Tries again of a view the pool could not apply: the first after
// retryFirst, each later one after twice the time before, up to
// retryMost. A view is refused for a reason that passes as well as for
// one that does not: a server added and marked exclusive is emptied
// before it takes keys, and one whose link is down for a moment cannot be
// - the source gives no new version when it is back.
const (
	retryFirst = 250 * time.Millisecond
	retryMost  = 10 * time.Second
)

// start runs apply for each new view, the first one included, and again
// while the newest is refused, until close.
func (ps *poolSource) start(apply func(*poolSource)) {
	ps.running = true
	go func() {
		defer close(ps.done)
		wait := retryFirst
		for {
			apply(ps)
			var again <-chan time.Time
			var t *time.Timer
			if ps.refusal() != nil {
				t = time.NewTimer(wait)
				again, wait = t.C, min(2*wait, retryMost)
			} else {
				wait = retryFirst
			}
			select {
			case <-ps.ctx.Done():
				return
			case <-ps.changed:
			case <-again:
			}
			if t != nil {
				t.Stop()
			}
		}
	}()
}

// refusal is why the newest view is not served, nil when it is.
func (ps *poolSource) refusal() error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.refused
}

// close stops following the source and waits for the goroutines.
func (ps *poolSource) close() {
	ps.cancel()
	if ps.running {
		<-ps.done
	}
	if ps.f != nil {
		_ = ps.f.Close()
	}
	if ps.w != nil {
		_ = ps.w.Close()
		<-ps.listed
	}
	if err := ps.closeSrc(); err != nil {
		ps.log.Warn("membership: closing the source", "err", err)
	}
}

// keeps reports whether the source serves a pool configured as pc after
// a reload: the same source and placement settings, and, before its first
// version, the same default servers.
func (ps *poolSource) keeps(key sourceKey, pc *PoolConfig) bool {
	return reflect.DeepEqual(ps.key, key) && (ps.view.Load().revision > 0 || slices.Equal(ps.base.Servers, pc.Servers))
}

// setRefused records why v is not served (nil: it is), logging a refusal
// once.
func (ps *poolSource) setRefused(v *sourceView, err error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("revision %d not applied: %w", v.revision, err)
		if ps.noted != v {
			ps.log.Error("membership: keeping the servers in use", "err", err)
			ps.noted = v
		}
	}
	ps.refused = err
}

// sourceState is what a source reports about itself.
type sourceState struct {
	revision   int64 // of the newest version the source gave
	versions   int64
	resyncs    int64
	lastAnswer time.Time
	err        error // why the view may be behind the store
}

func (ps *poolSource) state() sourceState {
	var st membership.Status
	var err error
	if ps.f != nil {
		st = ps.f.Status()
		err = ps.f.Err()
	} else {
		st = ps.w.Status()
	}
	ps.mu.Lock()
	refused := ps.refused
	ps.mu.Unlock()
	s := sourceState{revision: st.Revision, versions: st.Versions, resyncs: st.Resyncs, lastAnswer: st.LastAnswer}
	switch {
	case refused != nil:
		s.err = refused
	case err != nil:
		s.err = err
	case st.Err != nil:
		s.err = st.Err
	case st.LastAnswer.IsZero():
		s.err = errors.New("no answer from the source yet")
	}
	return s
}

// checkNodes returns why nodes cannot be a pool's servers, or nil: there
// are none, or a node has no address a server can have, or (whole, for
// ketama and modula) a weight that is not a whole number.
func checkNodes(nodes []kolco.Node, whole bool) error {
	if len(nodes) == 0 {
		return errors.New("no nodes take keys")
	}
	for _, n := range nodes {
		if n.Addr == "" {
			return fmt.Errorf("node %q has no address (kolco members add %s --addr HOST:PORT)", n.ID, n.ID)
		}
		if !strings.HasPrefix(n.Addr, "/") {
			if _, _, err := net.SplitHostPort(n.Addr); err != nil {
				return fmt.Errorf("node %q: address %q: want host:port or a unix socket path", n.ID, n.Addr)
			}
		}
		if w := n.EffectiveWeight(); whole && (w != math.Trunc(w) || w > math.MaxInt32) {
			return fmt.Errorf("node %q: weight %g: ketama and modula take whole weights", n.ID, w)
		}
	}
	return nil
}

// twemproxyFingerprint returns the fingerprint of a ketama or modula
// placement over servers, in kolco.Fingerprint's form: nutcracker places
// keys by the distribution, the hash, the hash tag and each server's
// ring name (its node's ID) and weight (in the order of their names,
// whatever the order of the lines), so two pools with equal fingerprints
// place every key alike.
func twemproxyFingerprint(distribution, hash, hashTag string, servers []kolco.Node) string {
	parts := make([]string, len(servers))
	for i, s := range servers {
		parts[i] = fmt.Sprintf("%q %d", s.ID, int(s.EffectiveWeight()))
	}
	slices.Sort(parts)
	h := sha256.New()
	fmt.Fprintf(h, "kolco proxy twemproxy 1\n%q %q %q\n", distribution, hash, hashTag)
	for _, p := range parts {
		fmt.Fprintln(h, p)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func nodeIDs(nodes []kolco.Node) []string {
	if len(nodes) == 0 {
		return nil
	}
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
	}
	return ids
}

// loggedSource returns src, whose answers that keep the servers in use - a
// file that does not parse, a store that cannot be reached - are logged
// as warnings when they begin or change, and its recovery when it comes:
// at the default level, so that an operator reads in the log why the
// servers did not change, not only on the status page.
func loggedSource(src membership.Source, log *slog.Logger) membership.Source {
	ls := logSource{Source: src, log: log}
	if w, ok := src.(membership.StateWriter); ok {
		return logStateSource{ls, w}
	}
	return ls
}

type logSource struct {
	membership.Source
	log *slog.Logger
}

// logStateSource is a logSource over a source that writes placement
// states (etcd's), which the follower asks for.
type logStateSource struct {
	logSource
	membership.StateWriter
}

func (s logSource) Follow(ctx context.Context, r membership.Reporter) error {
	return s.Source.Follow(ctx, &logReporter{Reporter: r, log: s.log})
}

// logReporter logs what a source reports that keeps the servers in use.
type logReporter struct {
	membership.Reporter
	log *slog.Logger
	// mu guards last, the text of the last error logged.
	mu   sync.Mutex
	last string
}

func (r *logReporter) Answered(err error) {
	r.note(err, "membership: the source's answer is refused; keeping the servers in use")
	r.Reporter.Answered(err)
}

func (r *logReporter) Failed(err error) {
	if err == nil {
		err = membership.ErrUnreachable
	}
	r.note(err, "membership: the source cannot be read; keeping the servers in use")
	r.Reporter.Failed(err)
}

func (r *logReporter) Yield(ctx context.Context, v membership.Version) error {
	r.note(nil, "")
	return r.Reporter.Yield(ctx, v)
}

// note logs err when it differs from the last one logged, and the end of
// the trouble when err is nil after one.
func (r *logReporter) note(err error, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil && r.last != "":
		r.log.Info("membership: the source answers again")
		r.last = ""
	case err != nil && err.Error() != r.last:
		r.log.Warn(msg, "err", err)
		r.last = err.Error()
	}
}
