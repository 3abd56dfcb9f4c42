package proxy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestStatusPageShowsGossip: the status page of a pool on gossip, opened
// in headless Chromium, shows the pool's members - its nodes and this
// proxy, an observer - by gossip address, this proxy's name and health,
// and that its revision is its own count; a pool on its servers list shows
// no gossip section.
func TestStatusPageShowsGossip(t *testing.T) {
	t.Parallel()
	br := startBrowser(t)
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

	br.open("http://" + s.AdminAddr().String() + "/status?refresh=0")
	var page []struct {
		Pool, Member, Health, Text string
		Rows                       []string
	}
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
	want := []string{"n0 node " + seed.Addr() + " alive", "n1 node " + n1.Addr() + " alive", me + " observer " + bind + " alive"}
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
