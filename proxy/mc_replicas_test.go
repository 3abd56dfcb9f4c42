package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/keyhash"
)

// replicaPool starts four memcached servers, m0 and m1 in zone a, m2 and
// m3 in zone b, and a proxy for them with two replicas per key read in
// zone a. extra adds pool settings.
func replicaPool(t *testing.T, extra string) (*Server, []*memcached) {
	t.Helper()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	var b strings.Builder
	b.WriteString("p:\n  listen: 127.0.0.1:0\n  distribution: ring\n  replicas: 2\n  zone: a\n")
	if !strings.Contains(extra, "  timeout:") {
		b.WriteString("  timeout: 10000\n")
	}
	b.WriteString("  zones: {m0: a, m1: a, m2: b, m3: b}\n")
	b.WriteString(extra)
	b.WriteString("  servers:\n")
	for i, m := range ms {
		fmt.Fprintf(&b, "   - %s:1 m%d\n", m.addr, i)
	}
	return startProxy(t, b.String()), ms
}

// holdersOf returns, for each key, the indexes of the servers holding it.
func holdersOf(t *testing.T, ms []*memcached, keys []string) [][]int {
	at := make([][]int, len(keys))
	for si, m := range ms {
		c := dial(t, m.addr)
		for i, k := range keys {
			if strings.HasPrefix(c.do("get "+k+"\r\n"), "VALUE") {
				at[i] = append(at[i], si)
			}
		}
	}
	return at
}

// TestReplicasPlacement stores each key, through the proxy, on exactly the
// two servers the ring's zone-aware preference list names - one per zone -
// and on no other.
func TestReplicasPlacement(t *testing.T) {
	t.Parallel()
	s, ms := replicaPool(t, "")
	c := dial(t, s.Addr("p").String())
	keys := diffKeys(300)
	for _, k := range keys {
		if got := c.do("set " + k + " 0 0 1\r\nv\r\n"); got != "STORED\r\n" {
			t.Fatalf("set %q: %q", k, got)
		}
	}
	zones := []string{"a", "a", "b", "b"}
	perServer := make([]int, len(ms))
	for i, got := range holdersOf(t, ms, keys) {
		exp := wantCopies(t, keys[i])
		slices.Sort(exp)
		if !slices.Equal(got, exp) {
			t.Fatalf("key %q on servers %v, want %v", keys[i], got, exp)
		}
		if zones[got[0]] == zones[got[1]] {
			t.Fatalf("key %q: both copies in zone %s", keys[i], zones[got[0]])
		}
		for _, si := range got {
			perServer[si]++
		}
	}
	for si, n := range perServer {
		if n == 0 {
			t.Fatalf("server m%d holds no key: %v", si, perServer)
		}
	}
	// Deletes reach every copy too.
	for _, k := range keys[:50] {
		if got := c.do("delete " + k + "\r\n"); got != "DELETED\r\n" {
			t.Fatalf("delete %q: %q", k, got)
		}
	}
	for i, got := range holdersOf(t, ms, keys[:50]) {
		if len(got) != 0 {
			t.Fatalf("deleted key %q still on %v", keys[i], got)
		}
	}
}

// TestReplicasReadLocalZone reads each key from its copy in the proxy's
// zone, for get and for a multi-get, and refuses cas, whose value differs
// between copies.
func TestReplicasReadLocalZone(t *testing.T) {
	t.Parallel()
	s, ms := replicaPool(t, "")
	c := dial(t, s.Addr("p").String())
	keys := diffKeys(40)
	for _, k := range keys {
		c.do("set " + k + " 0 0 1\r\nv\r\n")
	}
	// Give each copy a value naming its server.
	at := holdersOf(t, ms, keys)
	for i, k := range keys {
		for _, si := range at[i] {
			dial(t, ms[si].addr).do(fmt.Sprintf("set %s 0 0 1\r\n%d\r\n", k, si))
		}
	}
	local := func(i int) string { // the copy in zone a: m0 or m1
		for _, si := range at[i] {
			if si < 2 {
				return fmt.Sprint(si)
			}
		}
		t.Fatalf("key %q has no copy in zone a: %v", keys[i], at[i])
		return ""
	}
	for i, k := range keys {
		if got, want := c.do("get "+k+"\r\n"), "VALUE "+k+" 0 1\r\n"+local(i)+"\r\nEND\r\n"; got != want {
			t.Fatalf("get %q: %q, want %q", k, got, want)
		}
	}
	var want strings.Builder
	for i, k := range keys[:10] {
		fmt.Fprintf(&want, "VALUE %s 0 1\r\n%s\r\n", k, local(i))
	}
	want.WriteString("END\r\n")
	if got := c.do("get " + strings.Join(keys[:10], " ") + "\r\n"); got != want.String() {
		t.Fatalf("multi-get: %q, want %q", got, want.String())
	}
	if got := c.do("cas " + keys[0] + " 0 0 1 1\r\nx\r\n"); !strings.HasPrefix(got, "SERVER_ERROR cas is not supported") {
		t.Fatalf("cas: %q", got)
	}
	if got := c.do("ms " + keys[0] + " 1 C1\r\nx\r\n"); !strings.HasPrefix(got, "SERVER_ERROR cas is not supported") {
		t.Fatalf("ms with C: %q", got)
	}
	if got := c.do("ms " + keys[0] + " 1 T0\r\nx\r\n"); got != "HD\r\n" {
		t.Fatalf("ms: %q", got)
	}
}

// TestReplicasSurviveAServer kills one server, under either ejection
// policy: writes still succeed on the other copy, and once the server is
// marked down its keys are read from their copy in the other zone (under
// rehash too: with replicas the placement keeps down servers).
func TestReplicasSurviveAServer(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"", "  auto_eject_hosts: true\n"} {
		name := map[string]string{"": "fail-fast", "  auto_eject_hosts: true\n": "rehash"}[policy]
		t.Run(name, func(t *testing.T) {
			s, ms := replicaPool(t, policy+"  server_failure_limit: 1\n  server_retry_timeout: 60000\n")
			c := dial(t, s.Addr("p").String())
			keys := diffKeys(60)
			for _, k := range keys {
				c.do("set " + k + " 0 0 1\r\nv\r\n")
			}
			at := holdersOf(t, ms, keys)
			ms[0].stop()
			for _, k := range keys {
				if got := c.do("set " + k + " 0 0 1\r\nw\r\n"); got != "STORED\r\n" {
					t.Fatalf("set %q with m0 dead: %q", k, got)
				}
			}
			n := 0
			for i, k := range keys {
				if !slices.Contains(at[i], 0) {
					continue
				}
				n++
				want := "VALUE " + k + " 0 1\r\nw\r\nEND\r\n"
				eventually(t, "reads of "+k+" from its other copy", func() bool { return c.do("get "+k+"\r\n") == want })
			}
			if n == 0 {
				t.Fatal("no key had a copy on m0")
			}
		})
	}
}

// TestReplicasReplies answers a write with the first copy's reply that is
// not an error, in preference order; noreply and quiet writes reach every
// copy without a reply.
func TestReplicasReplies(t *testing.T) {
	t.Parallel()
	s, ms := replicaPool(t, "")
	c := dial(t, s.Addr("p").String())
	keys := diffKeys(20)
	at := func(k string) []int { return holdersOf(t, ms, []string{k})[0] }

	// add: the first copy still has the key, the second does not.
	k := keys[0]
	c.do("set " + k + " 0 0 1\r\nv\r\n")
	copies := at(k)
	first := wantCopies(t, k)[0]
	for _, si := range copies {
		if si != first {
			dial(t, ms[si].addr).do("delete " + k + "\r\n")
		}
	}
	if got := c.do("add " + k + " 0 0 1\r\nx\r\n"); got != "NOT_STORED\r\n" {
		t.Fatalf("add with the key on the first copy only: %q, want the first copy's NOT_STORED", got)
	}

	// incr, touch, append and a quiet ms reach both copies.
	k = keys[1]
	c.do("set " + k + " 0 0 1\r\n5\r\n")
	if got := c.do("incr " + k + " 3\r\n"); got != "8\r\n" {
		t.Fatalf("incr: %q", got)
	}
	c.send("append " + k + " 0 0 1 noreply\r\n0\r\n")
	c.send("ms " + keys[2] + " 1 q\r\nz\r\n")
	if got := c.do("mn\r\n"); got != "MN\r\n" {
		t.Fatalf("noreply and quiet writes answered: %q before MN", got)
	}
	for _, si := range at(k) {
		if got := dial(t, ms[si].addr).do("get " + k + "\r\n"); got != "VALUE "+k+" 0 2\r\n80\r\nEND\r\n" {
			t.Fatalf("copy on m%d after incr and append: %q", si, got)
		}
	}
	if got := at(keys[2]); len(got) != 2 {
		t.Fatalf("quiet ms reached %v", got)
	}
	if got := c.do("md " + keys[2] + "\r\n"); got != "HD\r\n" {
		t.Fatalf("md: %q", got)
	}
	if got := at(keys[2]); len(got) != 0 {
		t.Fatalf("md left copies on %v", got)
	}
}

// wantCopies returns the servers of key's copies in preference order, as
// the ring places them over replicaPool's servers and zones.
func wantCopies(t *testing.T, key string) []int {
	t.Helper()
	zones := []string{"a", "a", "b", "b"}
	nodes := make([]kolco.Node, len(zones))
	for i := range zones {
		nodes[i] = kolco.Node{ID: fmt.Sprint("m", i), Zone: zones[i]}
	}
	r, err := algo.New("ring", nodes, algo.Options{Hash: keyhash.XXH3, ZoneAware: true})
	if err != nil {
		t.Fatal(err)
	}
	owners, err := r.LocateN(nil, key, 2)
	if err != nil {
		t.Fatal(err)
	}
	var servers []int
	for _, n := range owners {
		servers = append(servers, int(n.ID[1]-'0'))
	}
	return servers
}

// TestReplicasSettleARestoredServer pauses a server until it is marked
// down, writes while it is down, and resumes it: before it serves again
// the proxy copies to it what was written meanwhile, from the keys' other
// copies, so reads in its zone return the new values, not those it held
// before; and what nobody wrote meanwhile it still holds (it is not
// emptied).
func TestReplicasSettleARestoredServer(t *testing.T) {
	t.Parallel()
	s, ms := replicaPool(t, "  timeout: 1000\n  server_failure_limit: 1\n  health_check: {interval: 50, timeout: 1000}\n")
	c := dial(t, s.Addr("p").String())
	var keys []string // keys whose zone-a copy is m0
	for _, k := range diffKeys(200) {
		c.do("set " + k + " 0 0 3\r\nold\r\n")
		if slices.Contains(holdersOf(t, ms[:1], []string{k})[0], 0) {
			keys = append(keys, k)
		}
	}
	if len(keys) < 4 {
		t.Fatalf("only %d keys on m0", len(keys))
	}
	kept := keys[len(keys)-1] // nobody writes it while m0 is out
	keys = keys[:len(keys)-1]
	if err := ms[0].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if got := c.do("set " + k + " 0 0 3\r\nnew\r\n"); got != "STORED\r\n" {
			t.Fatalf("set %q with m0 paused: %q", k, got)
		}
	}
	if err := ms[0].cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	var m0 *backend
	for _, b := range s.testPool("p").backends {
		if b.addr == ms[0].addr {
			m0 = b
		}
	}
	eventually(t, "m0 restored", func() bool { return !m0.health.isDown() })
	for _, k := range keys {
		if got := c.do("get " + k + "\r\n"); got != "VALUE "+k+" 0 3\r\nnew\r\nEND\r\n" {
			t.Fatalf("get %q after m0 came back: %q, want the value written while it was out", k, got)
		}
	}
	if got := holdersOf(t, ms[:1], []string{kept})[0]; !slices.Contains(got, 0) {
		t.Errorf("m0 lost %q, which nobody wrote while it was out: it was emptied", kept)
	}
}

func TestReplicasConfigErrors(t *testing.T) {
	base := "p:\n  listen: 127.0.0.1:1\n  servers: [\"127.0.0.1:2:1 a\", \"127.0.0.1:3:1 b\"]\n"
	for _, tc := range []struct{ name, extra, key string }{
		{"ketama", "  replicas: 2\n", "replicas"},
		{"too many", "  distribution: ring\n  replicas: 3\n", "replicas"},
		{"over the limit", "  distribution: ring\n  replicas: 9\n", "replicas"},
		{"negative", "  distribution: ring\n  replicas: -1\n", "replicas"},
		{"unknown server", "  distribution: ring\n  replicas: 2\n  zones: {c: z}\n", "zones"},
		{"empty zone", "  distribution: ring\n  replicas: 2\n  zones: {a: \"\"}\n", "zones"},
		{"zone without zones", "  distribution: ring\n  zone: z\n", "zone"},
		{"zone of no server", "  distribution: ring\n  replicas: 2\n  zones: {a: x, b: y}\n  zone: z\n", "zone"},
		{"zones with one copy", "  distribution: ring\n  zones: {a: x, b: y}\n", "zones"},
		{"zones with rendezvous", "  distribution: rendezvous\n  replicas: 2\n  zones: {a: x, b: y}\n", "zones"},
		{"server zoned twice", "  distribution: ring\n  replicas: 2\n  zones: {a: x, \"127.0.0.1:2\": y}\n", "zones"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(base + tc.extra))
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Pool != "p" || ce.Key != tc.key {
				t.Fatalf("got %v, want an error of pool p's %s", err, tc.key)
			}
		})
	}
	if _, err := ParseConfig([]byte(base + "  distribution: ring\n  replicas: 2\n  zones: {a: x, \"127.0.0.1:3\": y}\n  zone: y\n")); err != nil {
		t.Errorf("valid replicas config: %v", err)
	}
}

// TestReplicasStayDownWhenNotSettled: a server that answers the health
// probe but whose copies of the keys written while it was out cannot be
// deleted stays down, however many probes succeed, and its keys are read
// from their other copy meanwhile.
func TestReplicasStayDownWhenNotSettled(t *testing.T) {
	t.Parallel()
	m := startMemcached(t, 0)
	var settles atomic.Int32
	fake := fakeServer(t, func(c net.Conn) {
		defer c.Close()
		r := bufio.NewReader(c)
		line, err := r.ReadString('\n')
		switch {
		case err != nil:
		case line == "version\r\n":
			_, _ = io.WriteString(c, "VERSION 1.6.0\r\n")
		case strings.HasPrefix(line, "mg k "):
			settles.Add(1)
			_, _ = io.WriteString(c, "SERVER_ERROR out of memory\r\n")
		}
		// Anything else: closed unanswered, a failure.
	})
	s := startProxy(t, fmt.Sprintf("p:\n  listen: 127.0.0.1:0\n  distribution: ring\n  replicas: 2\n  timeout: 10000\n"+
		"  server_failure_limit: 1\n  health_check: {interval: 20, timeout: 1000}\n  servers:\n   - %s:1 real\n   - %s:1 fake\n", m.addr, fake))
	c := dial(t, s.Addr("p").String())
	if got := c.do("set k 0 0 1\r\nv\r\n"); got != "STORED\r\n" {
		t.Fatalf("set with the fake copy failing: %q", got)
	}
	var fb *backend
	for _, b := range s.testPool("p").backends {
		if b.addr == fake {
			fb = b
		}
	}
	eventually(t, "the fake server marked down", fb.health.isDown)
	eventually(t, "three failed attempts to settle it", func() bool { return settles.Load() >= 3 })
	if !fb.health.isDown() {
		t.Fatal("restored although deleting its copy of k failed")
	}
	if got := c.do("get k\r\n"); got != "VALUE k 0 1\r\nv\r\nEND\r\n" {
		t.Fatalf("get while the fake copy is down: %q", got)
	}
}

// TestReloadKeepsDownReplicaDown: a reload that rebuilds a pool with
// replicas keeps a server that is down marked down, so that it is emptied
// before it serves again instead of returning what was deleted meanwhile.
func TestReloadKeepsDownReplicaDown(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	y := func(extra string) string {
		return fmt.Sprintf("p:\n  listen: %s\n  distribution: ring\n  replicas: 2\n  timeout: 500\n"+
			"  server_failure_limit: 1\n  health_check: {interval: 600000}\n%s  servers:\n   - %s:1 m0\n   - %s:1 m1\n",
			listen, extra, ms[0].addr, ms[1].addr)
	}
	s := startProxy(t, y(""))
	c := dial(t, listen)
	keys := diffKeys(40)
	for _, k := range keys {
		if got := c.do("set " + k + " 0 0 3\r\nold\r\n"); got != "STORED\r\n" {
			t.Fatal(got)
		}
	}
	if err := ms[0].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	b0 := s.testPool("p").backends[0]
	// A write times out on m0, which is then marked down. SIGSTOP takes a
	// moment to stop every thread, so the first write may still be served.
	eventually(t, "m0 down", func() bool {
		c.do("set trigger 0 0 1\r\nx\r\n")
		return b0.health.isDown()
	})
	for _, k := range keys {
		if got := c.do("delete " + k + "\r\n"); got != "DELETED\r\n" {
			t.Fatalf("delete %s: %q", k, got)
		}
	}
	if err := ms[0].cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig([]byte(y("  max_keys: 100\n"))) // any change rebuilds the pool
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if !s.testPool("p").backends[0].health.isDown() {
		t.Error("the reload brought m0 back without emptying it")
	}
	for _, k := range keys {
		if got := c.do("get " + k + "\r\n"); got != "END\r\n" {
			t.Fatalf("after the reload, deleted %s read back as %q", k, got)
		}
	}
}
