package proxy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// changeRun drives a proxy's pool through ejections, restores and reloads
// decoded from bytes, and after each checks the published placement
// against a model that applies the same changes: for kolco's
// distributions the algorithm over the configured servers, changed in
// place by Mutable.Apply of each reload's kolco.Diff, with a key's
// server the first in its preference list not down; for twemproxy's,
// nutcracker's build over the servers not down.
type changeRun struct {
	t        *testing.T
	dist     string
	weighted bool // the distribution takes weights
	s        *Server
	in       []string // the names in the configuration, in its order
	port     map[string]int
	weight   map[string]int
	maxKeys  int
	model    algo.Placement // nil for twemproxy's
	down     map[string]bool
	keys     []string
}

// universe is every server name a run may configure.
var universe = []string{"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"}

// changeDists are the distributions a run may use.
func changeDists() []string { return append(algo.Names(), twemproxy.Ketama, twemproxy.Modula) }

func newChangeRun(t *testing.T, dist string) *changeRun {
	r := &changeRun{t: t, dist: dist, in: slices.Clone(universe[:6]), port: map[string]int{}, weight: map[string]int{},
		down: map[string]bool{}, keys: testKeys("model", 300)}
	for _, n := range universe {
		r.port[n], r.weight[n] = closedPort(t), 1
	}
	_, err := algo.New(dist, []kolco.Node{{ID: "a", Weight: 2}}, algo.Options{})
	r.weighted = err == nil || isTwemproxy(&PoolConfig{Distribution: dist})
	r.s = startProxy(t, r.yaml())
	if !isTwemproxy(r.cfg()) {
		opts, err := settingsOf(r.cfg()).options()
		if err != nil {
			t.Fatal(err)
		}
		if r.model, err = algo.New(dist, r.nodes(), opts); err != nil {
			t.Fatal(err)
		}
	}
	r.check()
	return r
}

func (r *changeRun) lines() []string {
	var lines []string
	for _, n := range r.in {
		lines = append(lines, fmt.Sprintf("127.0.0.1:%d:%d %s", r.port[n], r.weight[n], n))
	}
	return lines
}

func (r *changeRun) yaml() string {
	extra := fmt.Sprintf("  distribution: %s\n  auto_eject_hosts: true\n  server_failure_limit: 1\n", r.dist)
	if r.maxKeys > 0 {
		extra += fmt.Sprintf("  max_keys: %d\n", r.maxKeys)
	}
	return placementYAML(extra, r.lines())
}

func (r *changeRun) cfg() *PoolConfig {
	cfg, err := ParseConfig([]byte(r.yaml()))
	if err != nil {
		r.t.Fatal(err)
	}
	return cfg.Pools["p"]
}

func (r *changeRun) nodes() []kolco.Node { return lineNodes(r.t, r.cfg(), r.lines()) }

func (r *changeRun) backend(name string) *backend {
	for _, b := range r.s.testPool("p").backends {
		if b.name() == name {
			return b
		}
	}
	r.t.Fatalf("no server %s", name)
	return nil
}

// step applies one operation: op picks what, arg which server or value.
func (r *changeRun) step(op, arg byte) {
	name := r.in[int(arg)%len(r.in)]
	switch op % 7 {
	case 0: // eject
		r.backend(name).fail(ErrConnLost, 1)
		r.down[name] = true
		r.check()
		return
	case 1: // restore (the settling before it is the health loop's: the
		// journal is closed as a return closes it)
		b := r.backend(name)
		if b.outage.Swap(nil) != nil {
			b.pool.outages.count.Add(-1)
		}
		b.restore()
		r.down[name] = false
		r.check()
		return
	case 2: // remove a server
		if len(r.in) > 1 {
			r.in = slices.DeleteFunc(r.in, func(n string) bool { return n == name })
			delete(r.down, name)
		}
	case 3: // add a server
		for _, n := range universe[int(arg)%len(universe):] {
			if !slices.Contains(r.in, n) {
				r.in = append(r.in, n)
				break
			}
		}
	case 4: // a new address: up again under it, unless it was down: then
		// its stand-ins' writes are settled onto it first (see
		// pool.inheritRepointed), and no server answers here
		r.port[name] = closedPort(r.t)
	case 5: // a new weight
		if r.weighted {
			r.weight[name] = 1 + int(arg)%3
		}
	case 6: // nothing about placement
		r.maxKeys = 100 + int(arg)
	}
	r.reload()
}

// reload applies the configuration to the proxy and the change to the
// model, and checks the placement against it.
func (r *changeRun) reload() {
	var oldNodes []kolco.Node
	if r.model != nil {
		oldNodes = r.model.Nodes()
	}
	reload(r.t, r.s, r.yaml())
	if r.model != nil {
		if err := r.model.Apply(kolco.Diff(oldNodes, r.nodes())); err != nil {
			r.t.Fatal(err)
		}
	}
	r.check()
}

// check compares the published placement with the model.
func (r *changeRun) check() {
	t := r.t
	pl := r.s.testPool("p").place.Load()
	if r.model != nil {
		if fp, _ := kolco.Fingerprint(r.model); pl.layout().fingerprint != fp {
			t.Fatalf("servers %v: fingerprint %s, the model's %s", r.in, pl.layout().fingerprint, fp)
		}
	}
	want := r.expected()
	for i, got := range routeNames(r.s.testPool("p"), r.keys) {
		if got != want[i] {
			t.Fatalf("servers %v, down %v: %s routed to %q, the model says %q", r.in, r.down, r.keys[i], got, want[i])
		}
	}
}

// expected returns the server the model gives each key, "" for none.
func (r *changeRun) expected() []string {
	out := make([]string, len(r.keys))
	if r.model == nil {
		var up []twemproxy.Server
		for _, l := range r.lines() {
			s, _ := twemproxy.ParseServer(l)
			if !r.down[s.Name] {
				up = append(up, s)
			}
		}
		if len(up) == 0 {
			return out
		}
		tp, err := twemproxy.New(twemproxy.Config{Hash: r.cfg().Hash, Distribution: r.dist}, up)
		if err != nil {
			r.t.Fatal(err)
		}
		for i, k := range r.keys {
			out[i] = up[tp.Index([]byte(k))].Name
		}
		return out
	}
	var buf []kolco.Node
	for i, k := range r.keys {
		buf, _ = r.model.LocateN(buf[:0], k, len(r.in))
		if j := slices.IndexFunc(buf, func(n kolco.Node) bool { return !r.down[n.ID] }); j >= 0 {
			out[i] = buf[j].ID
		}
	}
	return out
}

// fingerprintOr returns the layout's fingerprint, or "" for none.
func (l *layout) fingerprintOr() string {
	if l == nil {
		return ""
	}
	return l.fingerprint
}

// runChanges runs the operations data encodes on a pool of dist.
func runChanges(t *testing.T, dist string, data []byte) {
	r := newChangeRun(t, dist)
	for i := 0; i+1 < len(data) && i < 80; i += 2 {
		r.step(data[i], data[i+1])
	}
}

// TestPoolChangesMatchModel interleaves ejections, restores and reloads
// (servers removed, added, readdressed, re-weighted, and settings that do
// not place keys) at random on a pool of every distribution, and checks
// the published placement against the model after each.
func TestPoolChangesMatchModel(t *testing.T) {
	t.Parallel()
	for _, dist := range changeDists() {
		t.Run(dist, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(13, uint64(len(dist))))
			for range 3 {
				data := make([]byte, 80)
				for i := range data {
					data[i] = byte(rng.IntN(256))
				}
				runChanges(t, dist, data)
			}
		})
	}
}

// FuzzPoolChanges: the first byte picks the distribution, each pair after
// it an operation (see changeRun.step).
func FuzzPoolChanges(f *testing.F) {
	// The first byte indexes changeDists: 0 anchor, 2 jump, 4 maglev,
	// 9 slots, 10 ketama.
	f.Add([]byte{0, 0, 1, 0, 4, 1, 4, 1, 1})             // m1 then m4 out, back first-out-first-back
	f.Add([]byte{2, 0, 1, 0, 4, 1, 1, 1, 4})             // last-out-first-back
	f.Add([]byte{2, 0, 2, 2, 2, 3, 6, 3, 2, 1, 2})       // m2 down, removed, m6 and m2 added
	f.Add([]byte{9, 2, 1, 3, 0, 4, 0, 5, 3, 6, 1, 2, 0}) // removal, addition, readdress, weight, no change
	f.Add([]byte{10, 0, 0, 0, 1, 2, 4, 1, 0})            // ejections rebuild over the servers up
	f.Add([]byte{4, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5}) // every server down
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		dists := changeDists()
		runChanges(t, dists[int(data[0])%len(dists)], data[1:])
	})
}

// closedPort returns a loopback port that refuses connections until the
// test ends: bound, never listening, so that no other program - a
// server another test starts - can answer there and restore a server
// the run holds down.
func closedPort(t testing.TB) int {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return sa.(*syscall.SockaddrInet4).Port
}
