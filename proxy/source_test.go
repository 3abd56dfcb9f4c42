package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/dns/dnstest"
	"github.com/kolco-dev/kolco/membership/etcd"
	"github.com/kolco-dev/kolco/membership/etcdtest"
)

// TestMembershipConfig: the membership key takes one source, its
// durations in milliseconds, and refuses what cannot work with an error
// naming the key.
func TestMembershipConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:1\n  distribution: jump\n  servers: [\"a:1:1 x\"]\n" +
		"  membership:\n    etcd: {endpoints: [\"http://127.0.0.1:2379\"], prefix: /kolco/p/, timeout: 700, check_interval: 250, write_state: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Pools["p"].Membership.Etcd
	if e == nil || e.Prefix != "/kolco/p/" || e.Timeout != 700*time.Millisecond || e.CheckInterval != 250*time.Millisecond || !e.WriteState {
		t.Fatalf("etcd membership %+v", e)
	}
	if got := cfg.Pools["p"].Membership.String(); got != "etcd /kolco/p/ at http://127.0.0.1:2379" {
		t.Errorf("described as %q", got)
	}
	var b strings.Builder
	if err := cfg.Explain(&b); err != nil || !strings.Contains(b.String(), "membership: servers from etcd /kolco/p/ at http://127.0.0.1:2379") {
		t.Errorf("--check does not say where the servers come from (%v):\n%s", err, b.String())
	}
	for _, tc := range []struct{ yaml, want string }{
		{"{}", "give one source"},
		{"{file: {path: a}, dns: {name: b}}", "give one source"},
		{"{etcd: {prefix: /p/}}", "no endpoints"},
		{"{etcd: {endpoints: [\"http://h:1\"]}}", "no prefix"},
		{"{etcd: {endpoints: [\"http://h:1\"], prefix: /p/, cert_file: c}}", "both cert_file and key_file"},
		{"{etcd: {endpoints: [\"http://h:1\"], prefix: /p/, username: u}}", "password_file"},
		{"{dns: {records: A, name: mc.local, port: 11211}}", "stable_addresses"},
		{"{dns: {name: mc.local, port: 11211}}", "SRV records carry their own"},
		{"{dns: {name: mc.local, records: MX}}", "want SRV or A"},
		{"{dns: {name: mc.local, resolver: nohost}}", "resolver"},
		{"{file: {}}", "no path"},
		{"{file: {path: n.txt, format: nodes, pool: p}}", "a node list has no pools"},
		{"{file: {path: n.yml, interval: -1}}", "negative"},
		{"{file: {path: n.yml, colour: red}}", "colour"},
	} {
		_, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:1\n  servers: [\"a:1:1 x\"]\n  membership: " + tc.yaml + "\n"))
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "membership") {
			t.Errorf("membership %s: %v, want a ConfigError about membership saying %q", tc.yaml, err, tc.want)
		}
	}
	// A polled source gives each proxy its own history: refused for a
	// distribution placed by it, as gossip is; etcd keeps the history.
	for _, dist := range []string{"jump", "binomial", "slots", "anchor"} {
		for _, src := range []string{"{file: {path: n.yml}}", "{dns: {name: _mc._tcp.svc}}"} {
			_, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:1\n  distribution: " + dist + "\n  servers: [\"a:1:1 x\"]\n  membership: " + src + "\n"))
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Key != "membership" || !strings.Contains(err.Error(), "history-dependent") || !strings.Contains(err.Error(), "etcd") {
				t.Errorf("%s on %s: %v, want it refused as history-dependent, naming etcd", dist, src, err)
			}
		}
		y := "p:\n  listen: 127.0.0.1:1\n  distribution: " + dist + "\n  servers: [\"a:1:1 x\"]\n  membership: {etcd: {endpoints: [\"http://127.0.0.1:2379\"], prefix: /p/}}\n"
		if _, err := ParseConfig([]byte(y)); err != nil {
			t.Errorf("%s on etcd: %v", dist, err)
		}
	}
	_, err = ParseConfig([]byte("p:\n  listen: 127.0.0.1:1\n  zones: {x: a}\n  servers: [\"a:1:1 x\"]\n  membership: {file: {path: n.yml}}\n"))
	if err == nil || !strings.Contains(err.Error(), "zones") {
		t.Errorf("zones beside a source: %v, want them refused", err)
	}
}

// FuzzMembershipConfig: no membership key panics the parser, and one it
// accepts validates again.
func FuzzMembershipConfig(f *testing.F) {
	f.Add("{etcd: {endpoints: [\"http://127.0.0.1:2379\"], prefix: /k/, timeout: 100}}")
	f.Add("{dns: {name: _mc._tcp.svc, resolver: \"127.0.0.1:53\", interval: 10}}")
	f.Add("{dns: {name: mc, records: A, port: 1, stable_addresses: true}}")
	f.Add("{file: {path: n.yml, pool: p, settle: 0}}")
	f.Add("{gossip: {bind: 127.0.0.1:7946, seeds: [127.0.0.1:7947], probe_interval: 100, suspicion_mult: 3}}")
	f.Fuzz(func(t *testing.T, m string) {
		cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:1\n  servers: [\"a:1:1 x\"]\n  membership: " + m + "\n"))
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *ConfigError", err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted config fails Validate again: %v", err)
		}
	})
}

// membershipOf returns the pool's membership status from the admin
// endpoint.
func membershipOf(t *testing.T, s *Server, pool string) MembershipStatus {
	t.Helper()
	var all []MembershipStatus
	if code := adminGet(t, s, "/v1/membership", "", &all); code != http.StatusOK {
		t.Fatalf("GET /v1/membership: %d", code)
	}
	for _, ms := range all {
		if ms.Pool == pool {
			return ms
		}
	}
	t.Fatalf("no pool %q in %+v", pool, all)
	return MembershipStatus{}
}

// writeServers writes a one-pool nutcracker.yml listing servers, beside
// the old file and renamed over it.
func writeServers(t *testing.T, path string, servers ...*memcached) {
	t.Helper()
	var b strings.Builder
	b.WriteString("src:\n  servers:\n")
	for i, m := range servers {
		fmt.Fprintf(&b, "   - %s:1 n%d\n", m.addr, i)
	}
	if err := os.WriteFile(path+".new", []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

// TestPoolFollowsFile: a pool on a file source serves the file's servers
// in place of its own list, and a change of the file as a change of the
// pool: keys set through the proxy land where the admin endpoint says, and
// the fingerprint changes with the servers.
func TestPoolFollowsFile(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	path := filepath.Join(t.TempDir(), "members.yml")
	writeServers(t, path, ms[0], ms[1])
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  timeout: 10000\n"+
		"  servers:\n   - "+ms[2].addr+":1 static\n  membership: {file: {path: "+path+", interval: 20, settle: 40}}\n")
	eventually(t, "the file's servers served", func() bool {
		return slices.Equal(membershipOf(t, s, "p").Nodes, []string{"n0", "n1"})
	})
	first := membershipOf(t, s, "p")
	if first.Stale || first.Source != "file "+path || first.Fingerprint == "" || first.Changes < 1 {
		t.Errorf("after the first version: %+v", first)
	}
	writeServers(t, path, ms[0], ms[1], ms[2])
	eventually(t, "the changed file served", func() bool { return len(membershipOf(t, s, "p").Nodes) == 3 })
	second := membershipOf(t, s, "p")
	if second.Fingerprint == first.Fingerprint || second.Changes <= first.Changes {
		t.Errorf("after the change: %+v, before %+v", second, first)
	}
	c := dial(t, s.Addr("p").String())
	onNew := 0
	for _, k := range diffKeys(60) {
		var locs []Location
		adminGet(t, s, "/v1/pools/p/locate?key="+urlKey(k), "", &locs)
		if got := c.do("set " + k + " 0 0 1\r\nx\r\n"); got != "STORED\r\n" {
			t.Fatalf("set %q: %q", k, got)
		}
		owner := locs[0].Servers[0]
		if owner.Name == "n2" {
			onNew++
		}
		if !holds(t, &memcached{addr: owner.Addr}, k) {
			t.Errorf("%q: the admin endpoint says %s, which does not hold it", k, owner.Name)
		}
	}
	if onNew == 0 {
		t.Error("no key placed on the server the change added")
	}
}

// storeFor returns a store on the etcd server with prefix; Cleanup closes
// it.
func storeFor(t *testing.T, srv *etcdtest.Server, prefix string) *etcd.Store {
	t.Helper()
	// The timeout bounds each request, the reconnect after a Restart
	// included: generous, so that a busy machine's slow reconnect makes a
	// test slower, never fail (see realprog.Patience).
	st, err := etcd.New(etcd.Config{Endpoints: []string{srv.Endpoint}, Prefix: prefix, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// apply writes a change and returns its revision.
func apply(t *testing.T, st *etcd.Store, c etcd.Edit) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound, as eventually's
	defer cancel()
	rev, err := st.Update(ctx, func(etcd.Listing) (etcd.Edit, error) { return c, nil })
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// TestPoolOnEtcd: a pool on etcd serves the store's nodes at the store's
// revision, with the fingerprint a library follower of the same store
// reports. With etcd stopped the proxy keeps serving its last view and
// reports it stale, in JSON and in its metrics; with etcd back it catches
// up with a change written then, without a restart.
func TestPoolOnEtcd(t *testing.T) {
	t.Parallel()
	srv := etcdtest.Start(t, etcdtest.Config{})
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	st := storeFor(t, srv, "/kolco/p/")
	rev := apply(t, st, etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "a", Addr: ms[0].addr}}}})
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  timeout: 10000\n"+
		"  servers: [\""+ms[1].addr+":1 static\"]\n  membership: {etcd: {endpoints: [\""+srv.Endpoint+"\"], prefix: /kolco/p/, check_interval: 100, timeout: 1000}}\n")
	eventually(t, "the store's revision served", func() bool { return membershipOf(t, s, "p").Revision == rev })

	f, err := membership.Follow(context.Background(), st, membership.FollowConfig{Algorithm: "ring",
		Options: mustOptions(t, s.Config().WithDefaults().Pools["p"])})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := f.WaitRevision(t.Context(), rev)
	if err != nil {
		t.Fatal(err)
	}
	// The view is fresh once the watch is open: on a busy machine that may
	// take longer than the check interval, and the view is stale meanwhile.
	eventually(t, "the view fresh", func() bool {
		return !membershipOf(t, s, "p").Stale && strings.Contains(scrape(t, s), `kolco_proxy_membership_stale{pool="p"} 0`)
	})
	got := membershipOf(t, s, "p")
	if got.Fingerprint != v.Fingerprint || !slices.Equal(got.Nodes, []string{"a"}) || !got.Shared {
		t.Errorf("proxy %+v, library follower's fingerprint %s", got, v.Fingerprint)
	}
	metrics := scrape(t, s)
	for _, want := range []string{fmt.Sprintf(`kolco_proxy_membership_revision{pool="p"} %d`, rev),
		`kolco_proxy_placement_info{fingerprint="` + v.Fingerprint + `",pool="p",source="etcd /kolco/p/ at ` + srv.Endpoint + `"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	srv.Stop()
	eventually(t, "the view reported stale", func() bool { return membershipOf(t, s, "p").Stale })
	stale := membershipOf(t, s, "p")
	if stale.Revision != rev || stale.Error == "" || !strings.Contains(scrape(t, s), `kolco_proxy_membership_stale{pool="p"} 1`) {
		t.Errorf("while etcd is away: %+v", stale)
	}
	c := dial(t, s.Addr("p").String())
	if got := c.do("set k 0 0 1\r\nx\r\n"); got != "STORED\r\n" || !holds(t, ms[0], "k") {
		t.Errorf("set while etcd is away: %q, want it stored on the last view's server", got)
	}

	srv.Restart()
	rev = apply(t, st, etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "b", Addr: ms[1].addr}}}})
	eventually(t, "the change written after etcd came back", func() bool {
		m := membershipOf(t, s, "p")
		return m.Revision == rev && !m.Stale
	})
	if got := membershipOf(t, s, "p"); !slices.Equal(got.Nodes, []string{"a", "b"}) || got.Fingerprint == v.Fingerprint {
		t.Errorf("after etcd came back: %+v", got)
	}
}

func mustOptions(t *testing.T, pc *PoolConfig) algo.Options {
	t.Helper()
	opts, err := settingsOf(pc).options()
	if err != nil {
		t.Fatal(err)
	}
	return opts
}

// scrape returns the metrics the admin endpoint serves.
func scrape(t *testing.T, s *Server) string {
	t.Helper()
	resp, err := http.Get("http://" + s.AdminAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// TestPoolOnDNS: a pool on SRV records takes its servers by the records'
// target names (never their addresses), and a scale-up as a change.
func TestPoolOnDNS(t *testing.T) {
	d := dnstest.Start(t)
	const svc = "_memcache._tcp.mc.test."
	pods := func(n int) []string {
		rrs := make([]string, n)
		for i := range rrs {
			rrs[i] = fmt.Sprintf("%s 5 IN SRV 0 %d 11211 mc-%d.mc.test.", svc, 100/n, i)
		}
		return rrs
	}
	if err := d.Set(mdns.TypeSRV, pods(2)...); err != nil {
		t.Fatal(err)
	}
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  servers: [\"127.0.0.1:1:1 static\"]\n"+
		"  membership: {dns: {name: "+svc+", resolver: \""+d.Addr+"\", interval: 20}}\n")
	eventually(t, "the SRV targets served", func() bool {
		return slices.Equal(membershipOf(t, s, "p").Nodes, []string{"mc-0.mc.test", "mc-1.mc.test"})
	})
	before := membershipOf(t, s, "p")
	if err := d.Set(mdns.TypeSRV, pods(3)...); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the scale-up served", func() bool { return len(membershipOf(t, s, "p").Nodes) == 3 })
	var status PoolStatus
	adminGet(t, s, "/v1/pools/p", "", &status)
	after := status.Membership
	if after.Fingerprint == before.Fingerprint || after.Source != "dns SRV "+svc || status.Servers[2].Addr != "mc-2.mc.test:11211" {
		t.Errorf("after the scale-up: %+v, before %+v", status, before)
	}
	for _, sv := range status.Servers {
		if sv.Weight != 1 {
			t.Errorf("server %s weighted %g: SRV weights are ignored unless use_weights is set", sv.Name, sv.Weight)
		}
	}
}

// TestPoolRefusesUnservableVersion: a version the pool cannot serve -
// nodes without addresses - is refused: the servers in use keep serving,
// and the pool is reported stale, saying why.
func TestPoolRefusesUnservableVersion(t *testing.T) {
	m := startMemcached(t, 0)
	path := filepath.Join(t.TempDir(), "nodes.txt")
	if err := os.WriteFile(path, []byte("cache-a\ncache-b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  servers: [\""+m.addr+":1 static\"]\n"+
		"  membership: {file: {path: "+path+", format: nodes, interval: 20, settle: 20}}\n")
	eventually(t, "the version refused", func() bool { return strings.Contains(membershipOf(t, s, "p").Error, "no address") })
	got := membershipOf(t, s, "p")
	if !got.Stale || !strings.Contains(got.Error, `node "cache-a" has no address`) || !slices.Equal(got.Nodes, []string{"static"}) || got.Changes != 0 {
		t.Errorf("after a version without addresses: %+v", got)
	}
	if reply := dial(t, s.Addr("p").String()).do("set k 0 0 1\r\nx\r\n"); reply != "STORED\r\n" || !holds(t, m, "k") {
		t.Errorf("set: %q, want it stored on the server in use", reply)
	}
}

// TestReloadOfSourcedPool: a reload that keeps a pool's source keeps the
// source's servers and placement (not the file's static list), whatever
// else it changes; one that drops the source serves the static list again.
func TestReloadOfSourcedPool(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	path := filepath.Join(t.TempDir(), "members.yml")
	writeServers(t, path, ms[0], ms[1])
	conf := func(timeout int, source bool) string {
		y := fmt.Sprintf("kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  distribution: maglev\n  timeout: %d\n  servers: [\"%s:1 static\"]\n", timeout, ms[2].addr)
		if source {
			y += "  membership: {file: {path: " + path + ", interval: 20, settle: 40}}\n"
		}
		return y
	}
	s := startProxy(t, conf(10000, true))
	eventually(t, "the file's servers served", func() bool { return len(membershipOf(t, s, "p").Nodes) == 2 })
	before := membershipOf(t, s, "p")
	reload := func(y string) {
		t.Helper()
		cfg, err := ParseConfig([]byte(y))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Global.AdminListen = s.AdminAddr().String()
		if err := s.Reload(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	reload(conf(9000, true))
	after := membershipOf(t, s, "p")
	if after.Fingerprint != before.Fingerprint || !slices.Equal(after.Nodes, before.Nodes) || s.Config().Pools["p"].Timeout != 9*time.Second {
		t.Errorf("after a reload keeping the source: %+v, before %+v", after, before)
	}
	reload(conf(9000, false))
	static := membershipOf(t, s, "p")
	if !slices.Equal(static.Nodes, []string{"static"}) || static.Source != "configuration" || static.Revision != 0 {
		t.Errorf("after a reload dropping the source: %+v", static)
	}
	s.mu.Lock()
	followed := len(s.sourcing.byPool)
	s.mu.Unlock()
	if followed != 0 {
		t.Errorf("a dropped source is still followed (%d sources)", followed)
	}
}

// TestShutdownStopsSources: a server shut down leaves no goroutine of its
// membership sources (etcd's client included) behind.
func TestShutdownStopsSources(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Config{})
	m := startMemcached(t, 0)
	apply(t, storeFor(t, srv, "/kolco/p/"), etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "a", Addr: m.addr}}}})
	path := filepath.Join(t.TempDir(), "members.yml")
	writeServers(t, path, m)
	base := runtime.NumGoroutine()
	cfg, err := ParseConfig([]byte("kolco:\n  admin_listen: \":0\"\n" +
		"p:\n  listen: 127.0.0.1:0\n  servers: [\"" + m.addr + ":1 static\"]\n  membership: {etcd: {endpoints: [\"" + srv.Endpoint + "\"], prefix: /kolco/p/}}\n" +
		"q:\n  listen: 127.0.0.1:" + fmt.Sprint(freePort(t)) + "\n  distribution: ketama\n  servers: [\"" + m.addr + ":1 static\"]\n  membership: {file: {path: " + path + ", interval: 20, settle: 20}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "both sources served", func() bool {
		return membershipOf(t, s, "p").Revision > 0 && slices.Equal(membershipOf(t, s, "q").Nodes, []string{"n0"})
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	http.DefaultClient.CloseIdleConnections() // the test's own connections to the admin endpoint
	eventually(t, "the sources' goroutines to end", func() bool { return runtime.NumGoroutine() <= base })
}

// TestSourcedChangeIsWarm: a version of a pool's source is applied as a
// reload's change is, warm: after a node joins, the keys that moved to it
// are still read, from the server that held them, and copied to it.
func TestSourcedChangeIsWarm(t *testing.T) {
	t.Parallel()
	srv := etcdtest.Start(t, etcdtest.Config{})
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	st := storeFor(t, srv, "/kolco/p/")
	rev := apply(t, st, etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "a", Addr: ms[0].addr}, {ID: "b", Addr: ms[1].addr}}}})
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  timeout: 10000\n"+
		"  servers: [\""+ms[0].addr+":1 a\"]\n  membership: {etcd: {endpoints: [\""+srv.Endpoint+"\"], prefix: /kolco/p/}}\n")
	eventually(t, "the store's nodes served", func() bool { return membershipOf(t, s, "p").Revision == rev })
	c := dial(t, s.Addr("p").String())
	keys := diffKeys(200)
	for _, k := range keys {
		if got := c.do("set " + k + " 0 0 1\r\nx\r\n"); got != "STORED\r\n" {
			t.Fatalf("set %q: %q", k, got)
		}
	}
	rev = apply(t, st, etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "c", Addr: ms[2].addr}}}})
	eventually(t, "the new node served", func() bool { return membershipOf(t, s, "p").Revision == rev })
	moved := 0
	for _, k := range keys {
		var locs []Location
		adminGet(t, s, "/v1/pools/p/locate?key="+urlKey(k), "", &locs)
		onNew := locs[0].Servers[0].Name == "c"
		if onNew {
			moved++
		}
		if got := c.do("get " + k + "\r\n"); !strings.HasPrefix(got, "VALUE ") {
			t.Errorf("%q (moved to c: %v) missed after the change: %q", k, onNew, got)
		}
		if onNew {
			eventually(t, "the moved key copied to c", func() bool { return holds(t, ms[2], k) })
		}
	}
	if moved == 0 {
		t.Fatal("no key moved to the node that joined")
	}
}
