package proxy

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

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

// TestStatusPageInBrowser: the status page, opened in headless Chromium,
// renders each pool's servers, their shares, the revision and fingerprint
// the JSON reports, and the agreement with the proxy's peers - one on the
// same etcd prefix agreeing, one placing otherwise named as differing -
// with no script error.
func TestStatusPageInBrowser(t *testing.T) {
	t.Parallel()
	br := startBrowser(t)
	srv := etcdtest.Start(t, etcdtest.Config{})
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	st := storeFor(t, srv, "/kolco/p/")
	rev := apply(t, st, etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "a", Addr: ms[0].addr}, {ID: "b", Addr: ms[1].addr, Weight: 3}}}})
	onEtcd := "p:\n  listen: 127.0.0.1:0\n  distribution: ring\n  servers: [\"" + ms[2].addr + ":1 static\"]\n" +
		"  membership: {etcd: {endpoints: [\"" + srv.Endpoint + "\"], prefix: /kolco/p/, check_interval: 100}}\n"
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

// TestStatusPageShowsFailingServer: under ejection none, the default of
// kolco's distributions, a dead server is never marked down; the page,
// opened in headless Chromium, shows it failing in red - not green "up" -
// with its errors, its last error and since when, beside the live
// server's requests, latency and connections.
func TestStatusPageShowsFailingServer(t *testing.T) {
	t.Parallel()
	br := startBrowser(t)
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
