package proxy

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership/etcd"
	"github.com/kolco-dev/kolco/membership/etcdtest"
)

// renderedPool is what the status page shows of a pool, read from the
// page as the browser rendered it.
type renderedPool struct {
	Pool, Source, Revision, Fingerprint, Agree, Summary string
	Peers                                               []struct{ Name, State string }
	Nodes                                               []struct {
		Name, Share, Health string
		Visible             bool
	}
	Times []string
}

const readPage = `return Array.from(document.querySelectorAll("section.pool")).map(function (s) {
  var q = function (sel) { return s.querySelector(sel); };
  return {
    Pool: s.dataset.pool, Source: q(".source").textContent, Revision: q(".revision").textContent,
    Fingerprint: q(".fingerprint").textContent, Agree: q("p.agreement").dataset.agree,
    Summary: q("p.agreement").textContent,
    Peers: Array.from(s.querySelectorAll("tr.peer")).map(function (r) { return {Name: r.dataset.peer, State: r.dataset.state}; }),
    Nodes: Array.from(s.querySelectorAll("tr.node")).map(function (r) {
      return {Name: r.dataset.node, Share: r.querySelector(".share").textContent,
        Health: r.children[4].textContent, Visible: r.getBoundingClientRect().height > 0};
    }),
    Times: Array.from(s.querySelectorAll("time")).map(function (t) { return t.textContent; })
  };
});`

// TestStatusPage: the status page, opened in headless Chromium, shows what
// the proxy knows - each behaviour below on a proxy of its own, in one
// browser, since a browser's start costs more than any of them.
func TestStatusPage(t *testing.T) {
	t.Parallel()
	br := startBrowser(t)
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *browser)
	}{
		{"agreement", statusPageAgreement},
		{"failing server", statusPageFailingServer},
		{"after failures", statusPageAfterFailures},
		{"gossip", statusPageGossip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			br.t = t
			br.console() // what an earlier page wrote there
			tc.run(t, br)
		})
	}
	br.t = t // for the session's end, in t's Cleanup
}

// statusPageAgreement: the status page, opened in headless Chromium,
// renders each pool's servers, their shares, the revision and fingerprint
// the JSON reports, and the agreement with the proxy's peers - one on the
// same etcd prefix agreeing, one placing otherwise named as differing -
// with no script error.
func statusPageAgreement(t *testing.T, br *browser) {
	srv := etcdtest.Start(t, etcdtest.Config{})
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	st := storeFor(t, srv, "/kolco/p/")
	rev := apply(t, st, etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "a", Addr: ms[0].addr}, {ID: "b", Addr: ms[1].addr, Weight: 3}}}})
	// A check every 2 s: each waits as long for etcd's progress reply,
	// and at 100 ms a busy machine (load 21) showed this proxy "may be
	// behind its source" where the page should say it agrees.
	onEtcd := "p:\n  listen: 127.0.0.1:0\n  distribution: ring\n  servers: [\"" + ms[2].addr + ":1 static\"]\n" +
		"  membership: {etcd: {endpoints: [\"" + srv.Endpoint + "\"], prefix: /kolco/p/, check_interval: 2000}}\n"
	same := startProxy(t, "kolco:\n  admin_listen: \":0\"\n"+onEtcd)
	other := startProxy(t, "kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  servers: [\""+ms[2].addr+":1 static\"]\n")
	peers := []string{same.AdminAddr().String(), other.AdminAddr().String()}
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\n  admin_peers: [\""+strings.Join(peers, "\", \"")+"\"]\n"+onEtcd)
	for _, p := range []*Server{s, same} {
		eventually(t, "the store's revision served", func() bool { return membershipOf(t, p, "p").Revision == rev })
	}
	var status PoolStatus
	if code := adminGet(t, s, "/v1/pools/p", "", &status); code != http.StatusOK {
		t.Fatalf("GET /v1/pools/p: %d", code)
	}

	br.open("http://" + s.AdminAddr().String() + "/status?refresh=0")
	var pools []renderedPool
	br.eval(readPage, &pools)
	if len(pools) != 1 {
		t.Fatalf("the page shows %d pools: %+v", len(pools), pools)
	}
	got := pools[0]
	if got.Pool != "p" || got.Revision != strconv.FormatInt(rev, 10) || got.Fingerprint != status.Membership.Fingerprint ||
		!strings.HasPrefix(got.Source, "etcd /kolco/p/") {
		t.Errorf("the page shows %+v; the JSON says revision %d, fingerprint %s", got, rev, status.Membership.Fingerprint)
	}
	if len(got.Nodes) != len(status.Servers) {
		t.Fatalf("the page shows nodes %+v, the JSON %+v", got.Nodes, status.Servers)
	}
	for i, n := range got.Nodes {
		sv := status.Servers[i]
		want := strconv.FormatFloat(100*sv.Share, 'f', 1, 64) + "%"
		if n.Name != sv.Name || n.Share != want || !n.Visible || strings.TrimSpace(n.Health) != "up" {
			t.Errorf("node row %+v, want %s with share %s, up, visible", n, sv.Name, want)
		}
	}
	if got.Agree != "no" || got.Summary != "the proxies DO NOT AGREE: 2 of 3 place alike, 1 differs" {
		t.Errorf("agreement %q: %q, want one of three differing", got.Agree, got.Summary)
	}
	states := map[string]string{}
	for _, p := range got.Peers {
		states[p.Name] = p.State
	}
	if states["this proxy"] != "agrees" || states[peers[0]] != "agrees" || states[peers[1]] != "differs" {
		t.Errorf("peers %+v: want this proxy and %s agreeing, %s differing", got.Peers, peers[0], peers[1])
	}
	if len(got.Times) == 0 || !slices.ContainsFunc(got.Times, func(s string) bool { return strings.HasSuffix(s, " ago)") }) {
		t.Errorf("times %q: the page's script did not show them as ages", got.Times)
	}
	for _, e := range br.console() {
		if e.Level == "SEVERE" || e.Level == "WARNING" {
			t.Errorf("console %s: %s", e.Level, e.Message)
		}
	}
}

// TestStatusPageAuth: with a token, the page asks a browser for it as
// the password of basic authentication, and answers with it; the JSON
// endpoints ask for a bearer token.
func TestStatusPageAuth(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startProxy(t, "kolco:\n  admin_listen: 127.0.0.1:0\n  admin_token_file: "+path+"\n"+poolYAML("", startMemcached(t, 0)))
	get := func(path, user, password string) *http.Response {
		req, err := http.NewRequest("GET", "http://"+s.AdminAddr().String()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if password != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := get("/status", "", ""); r.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Basic ") {
		t.Errorf("the page without the token: %s, %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	if r := get("/status", "anyone", "wrong"); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("the page with a wrong password: %s", r.Status)
	}
	if r := get("/status", "anyone", "s3cret"); r.StatusCode != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Errorf("the page with the token as password: %s %q", r.Status, r.Header.Get("Content-Type"))
	}
	if r := get("/v1/membership", "", ""); r.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer ") {
		t.Errorf("JSON without the token: %s, %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	if r := get("/status?refresh=x", "u", "s3cret"); r.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad refresh: %s", r.Status)
	}
}

// TestAdminPeersConfig: kolco.admin_peers takes host:port or http(s)
// URLs, beside an admin endpoint of the proxy's own.
func TestAdminPeersConfig(t *testing.T) {
	pool := "p:\n  listen: 127.0.0.1:1\n  servers: [\"a:1:1 x\"]\n"
	if _, err := ParseConfig([]byte("kolco:\n  admin_listen: \":1\"\n  admin_peers: [\"10.0.0.2:22223\", \"https://proxy-3:22223/\"]\n" + pool)); err != nil {
		t.Errorf("good peers refused: %v", err)
	}
	for _, tc := range []struct{ global, want string }{
		{"admin_peers: [\"10.0.0.2:22223\"]", "without admin_listen"},
		{"admin_listen: \":1\"\n  admin_peers: [\"ftp://h:1\"]", "want host:port or an http(s) URL"},
		{"admin_listen: \":1\"\n  admin_peers: [\"nohost\"]", "nohost"},
	} {
		_, err := ParseConfig([]byte("kolco:\n  " + tc.global + "\n" + pool))
		if err == nil || !strings.Contains(err.Error(), "admin_peers") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an admin_peers error saying %q", tc.global, err, tc.want)
		}
	}
}

// statusPageFailingServer: under ejection none, the default of
// kolco's distributions, a dead server is never marked down; the page,
// opened in headless Chromium, shows it failing in red - not green "up" -
// with its errors, its last error and since when, beside the live
// server's requests, latency and connections.
func statusPageFailingServer(t *testing.T, br *browser) {
	live, dead := startMemcached(t, 0), refusedAddr(t)
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  timeout: 10000\n"+
		"  servers:\n   - "+live.addr+":1 live\n   - "+dead+":1 dead\n")
	if got := s.testPool("p").cfg.Ejection; got != EjectNone {
		t.Fatalf("ejection %q, want none by default", got)
	}
	c := dial(t, s.Addr("p").String())
	failed := 0
	for i := range 200 {
		if got := c.do(fmt.Sprintf("set k%d 0 0 1\r\nx\r\n", i)); got != "STORED\r\n" {
			failed++
		}
	}
	if failed == 0 || failed == 200 {
		t.Fatalf("%d of 200 sets failed: want the dead server's share", failed)
	}
	br.open("http://" + s.AdminAddr().String() + "/status?refresh=0")
	var rows []struct {
		Name, Health, HealthText, Color, Requests, Errors, Latency, Connections, LastError string
		Times                                                                              int
	}
	br.eval(`return Array.from(document.querySelectorAll("tr.node")).map(function (r) {
  var q = function (sel) { return r.querySelector(sel); };
  return {Name: r.dataset.node, Health: q("td.health").dataset.health, HealthText: q("td.health").textContent,
    Color: getComputedStyle(q("td.health")).color, Requests: q(".requests").textContent, Errors: q(".errors").textContent,
    Latency: q(".latency").textContent, Connections: q(".connections").textContent, LastError: q(".last-error").textContent,
    Times: q("td.health").querySelectorAll("time").length};
});`, &rows)
	if len(rows) != 2 {
		t.Fatalf("rows %+v", rows)
	}
	byName := map[string]int{rows[0].Name: 0, rows[1].Name: 1}
	d, l := rows[byName["dead"]], rows[byName["live"]]
	green := "rgb(0, 119, 0)"
	if d.Health != "failing" || !strings.Contains(d.HealthText, "failing") || d.Color == green || d.Times != 1 {
		t.Errorf("dead server shown %+v: want failing, not green, with since when", d)
	}
	if d.Errors != strconv.Itoa(failed) || !strings.Contains(d.LastError, "connection refused") {
		t.Errorf("dead server's errors %q, last error %q: want %d, connection refused", d.Errors, d.LastError, failed)
	}
	if l.Health != "up" || l.Color != green || l.Requests != strconv.Itoa(200-failed) || l.Errors != "0" || l.Latency == "" || l.Connections != "1" {
		t.Errorf("live server shown %+v: want up in green, %d requests, no error, a latency, one connection", l, 200-failed)
	}
	for _, e := range br.console() {
		if e.Level == "SEVERE" || e.Level == "WARNING" {
			t.Errorf("console %s: %s", e.Level, e.Message)
		}
	}
}

// screenshot saves what the browser shows as name.png among the test's
// artifacts (go test -artifacts keeps them; -v logs where).
func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	// The whole page: a window as tall as it, and wide enough for the
	// tables.
	var height int
	b.eval("return document.documentElement.scrollHeight;", &height)
	b.call("POST", "/window/rect", map[string]int{"width": 1600, "height": height + 150}, nil)
	var data string
	b.call("GET", "/screenshot", nil, &data)
	png, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.ArtifactDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// pageNode is a server's row of the status page as the browser shows it.
type pageNode struct {
	Pool, Name, Health, Requests, Errors, Latency string
}

const readNodes = `return Array.from(document.querySelectorAll("section.pool")).flatMap(function (s) {
  return Array.from(s.querySelectorAll("tr.node")).map(function (r) {
    var q = function (sel) { return r.querySelector(sel).textContent; };
    return {Pool: s.dataset.pool, Name: r.dataset.node, Health: r.querySelector("td.health").dataset.health,
      Requests: q(".requests"), Errors: q(".errors"), Latency: q(".latency")};
  });
});`

// statusPageAfterFailures: a server that failed and came back is shown
// up within its retry timeout under every ejection policy - none (never
// marked down: probed while it fails), rehash and fail-fast (marked down,
// restored by a probe) - with no request reaching it meanwhile; its
// failed requests are counted among its requests, so that the requests of
// a pool's servers add up to what the client sent; durations and times
// read as the logs write them; and the proxy's own address among its
// admin_peers, and a peer listed twice, count once. In headless Chromium,
// with screenshots of the failures and of the return.
func statusPageAfterFailures(t *testing.T, br *browser) {
	f := startFailingFleet(t)
	for pool := range f.pools {
		if n := f.write(pool, 50); n != 0 {
			t.Fatalf("pool %s: %d of 50 sets failed with every server up", pool, n)
		}
	}
	f.back.stop()
	for pool := range f.pools {
		// Under rehash the dead server's keys move to the live one once
		// it is marked down, which its closed connection may do first.
		if n := f.write(pool, 50); n == 50 || n == 0 && pool != "rehash" {
			t.Fatalf("pool %s: %d of 50 sets failed with a server dead: want its share", pool, n)
		}
	}
	url := "http://" + f.self + "/status?refresh=0"
	health := func() map[string]string {
		br.open(url)
		var nodes []pageNode
		br.eval(readNodes, &nodes)
		out := map[string]string{}
		for _, n := range nodes {
			if n.Name == "back" {
				out[n.Pool] = n.Health
			}
		}
		return out
	}
	if h := health(); h["none"] != "failing" || h["rehash"] != "down" || h["failfast"] != "down" {
		t.Fatalf("with the server dead the page shows %v: want failing under none, down under rehash and fail-fast", h)
	}
	br.screenshot(t, "failing")

	f.back = startMemcached(t, f.back.port) // back, and no request reaches it
	returned := time.Now()
	deadline := returned.Add(time.Minute) // a busy machine's bound; the log says how long it took
	for h := health(); h["none"] != "up" || h["rehash"] != "up" || h["failfast"] != "up"; h = health() {
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the server returned the page shows %v: want up under every policy", h)
		}
		time.Sleep(100 * time.Millisecond) // polling the page, which a probe changes
	}
	t.Logf("the returned server was shown up under every policy %v after it returned (server_retry_timeout 1000 ms)", time.Since(returned).Round(time.Millisecond))
	br.screenshot(t, "returned")
	checkPageFigures(t, br, f.sent)
	checkPageWords(t, br, f)
}

// failingFleet is a proxy whose pools, one per ejection policy, share a
// live server and one that the test stops and starts again, with a peer
// running the same pools; its admin_peers list itself and the peer twice.
type failingFleet struct {
	t                     *testing.T
	s                     *Server
	live, back            *memcached
	pools                 map[string]string
	self, peer, peerAgain string
	sent                  map[string]int
}

func startFailingFleet(t *testing.T) *failingFleet {
	f := &failingFleet{t: t, live: startMemcached(t, 0), back: startMemcached(t, 0), sent: map[string]int{},
		pools: map[string]string{"none": "  ejection: none\n", "rehash": "  auto_eject_hosts: true\n", "failfast": "  auto_eject_hosts: true\n  ejection: fail-fast\n"}}
	config := func() string {
		var y string
		for _, name := range []string{"failfast", "none", "rehash"} {
			y += name + fmt.Sprintf(":\n  listen: 127.0.0.1:%d\n", freePort(t)) + f.pools[name] + "  server_failure_limit: 1\n  server_retry_timeout: 1000\n  timeout: 5000\n" +
				"  servers:\n   - " + f.live.addr + ":1 live\n   - " + f.back.addr + ":1 back\n"
		}
		return y
	}
	f.peer = startProxy(t, "kolco:\n  admin_listen: 127.0.0.1:0\n"+config()).AdminAddr().String()
	f.peerAgain = "localhost:" + f.peer[strings.LastIndexByte(f.peer, ':')+1:]
	f.self = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	f.s = startProxy(t, fmt.Sprintf("kolco:\n  admin_listen: %s\n  admin_peers: [%q, %q, %q]\n", f.self, f.self, f.peer, f.peerAgain)+config())
	return f
}

// write sets n keys through pool and returns how many failed.
func (f *failingFleet) write(pool string, n int) (failed int) {
	c := dial(f.t, f.s.Addr(pool).String())
	for i := range n {
		if got := c.do(fmt.Sprintf("set %d:%s 0 0 1\r\nx\r\n", i, pool)); got != "STORED\r\n" {
			failed++
		}
	}
	f.sent[pool] += n
	return failed
}

// checkPageFigures checks the page's servers: their requests add up to
// what the client sent each pool, failed ones among them, and latencies
// read in µs, ms or s.
func checkPageFigures(t *testing.T, br *browser, sent map[string]int) {
	t.Helper()
	var nodes []pageNode
	br.eval(readNodes, &nodes)
	requests := map[string]int{}
	duration := regexp.MustCompile(`^[0-9.]+ (µs|ms|s)$`)
	for _, n := range nodes {
		r, err := strconv.Atoi(n.Requests)
		if err != nil {
			t.Fatalf("%s/%s: requests %q", n.Pool, n.Name, n.Requests)
		}
		requests[n.Pool] += r
		if n.Latency != "" && !duration.MatchString(n.Latency) {
			t.Errorf("%s/%s: latency %q, want a number of µs, ms or s", n.Pool, n.Name, n.Latency)
		}
		if n.Name == "back" && n.Pool != "rehash" && n.Errors == "0" {
			t.Errorf("%s/back: no errors counted", n.Pool)
		}
	}
	for pool, n := range sent {
		if requests[pool] != n {
			t.Errorf("pool %s: the servers' requests add up to %d; the client sent %d", pool, requests[pool], n)
		}
	}
}

// checkPageWords checks the page's times, its agreement, what it counted
// once, and its console.
func checkPageWords(t *testing.T, br *browser, f *failingFleet) {
	t.Helper()
	var page struct {
		Times, Summaries, Same []string
		Peers                  int
	}
	br.eval(`return {Times: Array.from(document.querySelectorAll("time")).map(function (t) { return t.textContent; }),
  Summaries: Array.from(document.querySelectorAll("p.agreement")).map(function (p) { return p.textContent; }),
  Same: Array.from(document.querySelectorAll("span.same")).map(function (p) { return p.textContent; }),
  Peers: document.querySelectorAll("section.pool")[0].querySelectorAll("tr.peer").length};`, &page)
	when := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(\d+(\.\d)? (s|min|h) ago\)$`)
	for _, tm := range page.Times {
		if !when.MatchString(tm) {
			t.Errorf("time %q: want it in UTC, as the logs write it, with its age", tm)
		}
	}
	if len(page.Times) == 0 {
		t.Error("the page shows no time")
	}
	for _, sum := range page.Summaries {
		if sum != "all 2 proxies agree" {
			t.Errorf("agreement %q, want all 2 proxies agree: this one and its peer, each once", sum)
		}
	}
	if same := strings.Join(page.Same, ""); !strings.Contains(same, f.self+" is this proxy") || !strings.Contains(same, f.peerAgain+" is "+f.peer) || page.Peers != 2 {
		t.Errorf("counted once: %q, %d rows of peers; want %s as this proxy and %s as %s, 2 rows", same, page.Peers, f.self, f.peerAgain, f.peer)
	}
	for _, e := range br.console() {
		if e.Level == "SEVERE" || e.Level == "WARNING" {
			t.Errorf("console %s: %s", e.Level, e.Message)
		}
	}
}

// TestPageDuration: durations read as the proxy's other outputs write
// them, to three figures; never Go's 3.180206ms.
func TestPageDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{250 * time.Microsecond, "250 µs"}, {3180206 * time.Nanosecond, "3.18 ms"}, {12 * time.Millisecond, "12 ms"},
		{999 * time.Millisecond, "999 ms"}, {1500 * time.Millisecond, "1.5 s"}, {90 * time.Second, "90 s"},
	} {
		if got := pageDuration(tc.d); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestFailingWithoutProbes: with probes off, a server that failed is shown
// failing until server_retry_timeout has passed since its last failure,
// then up, as twemproxy tries it again then; with probes, until a probe or
// a request is answered.
func TestFailingWithoutProbes(t *testing.T) {
	now := time.Now()
	o := observed{failing: 3, lastErrAt: now.Add(-2 * time.Second)}
	for _, tc := range []struct {
		probes bool
		retry  time.Duration
		want   bool
	}{{false, time.Second, false}, {false, 5 * time.Second, true}, {true, time.Second, true}} {
		if got := o.failingNow(now, tc.probes, tc.retry); got != tc.want {
			t.Errorf("probes %v, retry %v: failing %v, want %v", tc.probes, tc.retry, got, tc.want)
		}
	}
	if (observed{}).failingNow(now, true, time.Second) {
		t.Error("a server with no failure is failing")
	}
}

// statusPageGossip: the status page of a pool on gossip, opened
// in headless Chromium, shows the pool's members - its nodes and this
// proxy, an observer - by gossip address, this proxy's name and health,
// and that its revision is its own count; a pool on its servers list shows
// no gossip section.
func statusPageGossip(t *testing.T, br *browser) {
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	seed := sidecar(t, nil, "n0", ms[0].addr)
	n1 := sidecar(t, nil, "n1", ms[1].addr, seed.Addr())
	bind := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := startProxy(t, fmt.Sprintf("kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  servers: [\"%s:1 static\"]\n"+
		"  membership: {gossip: {bind: %q, seeds: [%q], probe_interval: 100, probe_timeout: 50, gossip_interval: 20, suspicion_mult: 8}}\n"+
		"q:\n  listen: 127.0.0.1:%d\n  distribution: ring\n  servers: [\"%s:1 static\"]\n", ms[1].addr, bind, seed.Addr(), freePort(t), ms[1].addr))
	eventually(t, "the pool's members reported", func() bool {
		g := membershipOf(t, s, "p").Gossip
		return g != nil && len(g.Nodes) == 2 && len(g.Observers) == 1
	})
	me := membershipOf(t, s, "p").Gossip.Member

	want := []string{"n0 node " + seed.Addr() + " alive", "n1 node " + n1.Addr() + " alive", me + " observer " + bind + " alive"}
	var page []struct {
		Pool, Member, Health, Text string
		Rows                       []string
	}
	// A busy machine can starve a node's answers to the probes past their
	// timeout: the page then shows it "not answering", as it should. The
	// page is opened again, a bounded number of times, until the members
	// answer in time; what it shows then is checked below.
	for try := 0; try < 40; try++ {
		if try > 0 {
			time.Sleep(250 * time.Millisecond)
		}
		page = nil
		br.open("http://" + s.AdminAddr().String() + "/status?refresh=0")
		br.eval(`return Array.from(document.querySelectorAll("section.pool")).map(function (s) {
  var g = s.querySelector("div.gossip");
  if (!g) return {Pool: s.dataset.pool};
  return {Pool: s.dataset.pool, Member: g.querySelector(".gossip-member").textContent,
    Health: g.querySelector(".gossip-health").textContent, Text: g.textContent,
    Rows: Array.from(g.querySelectorAll("tr.gossip-member")).map(function (r) {
      return r.dataset.member + " " + r.dataset.role + " " + r.children[2].textContent + " " + r.children[3].textContent; })};
});`, &page)
		if len(page) != 2 || page[0].Pool != "p" || page[1].Pool != "q" {
			t.Fatalf("the page shows %+v, want pools p and q", page)
		}
		if page[0].Health == "0" && slices.Equal(page[0].Rows, want) {
			break
		}
	}
	if got := page[0]; got.Member != me || got.Health != "0" || !slices.Equal(got.Rows, want) ||
		!strings.Contains(got.Text, "own count") {
		t.Errorf("the gossip section shows %+v; want %s, health 0, rows %q and a word on revisions", got, me, want)
	}
	if page[1].Member != "" || page[1].Rows != nil {
		t.Errorf("a pool on its servers list shows a gossip section: %+v", page[1])
	}
	for _, e := range br.console() {
		if e.Level == "SEVERE" || e.Level == "WARNING" {
			t.Errorf("console %s: %s", e.Level, e.Message)
		}
	}
}
