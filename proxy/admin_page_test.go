package proxy

import (
	"net/http"
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
	br := startBrowser(t)
	srv := etcdtest.Start(t, etcdtest.Config{})
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	st := storeFor(t, srv, "/kolco/p/")
	rev := apply(t, st, etcd.Change{Add: []kolco.Node{{ID: "a", Addr: ms[0].addr}, {ID: "b", Addr: ms[1].addr, Weight: 3}}})
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
	if got.Agree != "no" || !strings.Contains(got.Summary, "1 of 3 proxies differ") {
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
