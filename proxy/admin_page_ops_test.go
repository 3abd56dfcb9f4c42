package proxy

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

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

// TestStatusPageAfterFailures: a server that failed and came back is shown
// up within its retry timeout under every ejection policy - none (never
// marked down: probed while it fails), rehash and fail-fast (marked down,
// restored by a probe) - with no request reaching it meanwhile; its
// failed requests are counted among its requests, so that the requests of
// a pool's servers add up to what the client sent; durations and times
// read as the logs write them; and the proxy's own address among its
// admin_peers, and a peer listed twice, count once. In headless Chromium,
// with screenshots of the failures and of the return.
func TestStatusPageAfterFailures(t *testing.T) {
	t.Parallel()
	br := startBrowser(t)
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
