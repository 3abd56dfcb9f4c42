package proxy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership/gossip"
)

// TestGossipConfig: the gossip key takes its durations in milliseconds,
// --check says where the servers come from, and history-dependent
// distributions and bad addresses are refused with errors naming the key.
func TestGossipConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:1\n  distribution: ring\n  servers: [\"a:1:1 x\"]\n" +
		"  membership:\n    gossip: {bind: 127.0.0.1:7946, seeds: [127.0.0.1:7947], key_file: k, probe_interval: 100, suspicion_mult: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	g := cfg.Pools["p"].Membership.Gossip
	if g == nil || g.Bind != "127.0.0.1:7946" || g.ProbeInterval != 100*time.Millisecond || g.SuspicionMult != 3 || g.KeyFile != "k" {
		t.Fatalf("gossip membership %+v", g)
	}
	var b strings.Builder
	if err := cfg.Explain(&b); err != nil || !strings.Contains(b.String(), "servers from gossip at 127.0.0.1:7946, seeds 127.0.0.1:7947") ||
		!strings.Contains(b.String(), "observer") {
		t.Errorf("--check does not say where the servers come from (%v):\n%s", err, b.String())
	}
	for _, tc := range []struct{ dist, yaml, want string }{
		{"jump", "{gossip: {bind: 127.0.0.1:1}}", "history-dependent"},
		{"slots", "{gossip: {bind: 127.0.0.1:1}}", "history-dependent"},
		{"ring", "{gossip: {}}", "no bind address"},
		{"ring", "{gossip: {bind: 127.0.0.1:1, seeds: [nohost]}}", "nohost"},
		{"ring", "{gossip: {bind: 127.0.0.1:1, probe_interval: -1}}", "negative"},
		{"ring", "{gossip: {bind: 127.0.0.1:1, colour: red}}", "colour"},
	} {
		_, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:1\n  distribution: " + tc.dist + "\n  servers: [\"a:1:1 x\"]\n  membership: " + tc.yaml + "\n"))
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "membership") {
			t.Errorf("%s, membership %s: %v, want a ConfigError about membership saying %q", tc.dist, tc.yaml, err, tc.want)
		}
	}
	two := "  distribution: ring\n  servers: [\"a:1:1 x\"]\n  membership: {gossip: {bind: 127.0.0.1:7946}}\n"
	if _, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:1\n" + two + "q:\n  listen: 127.0.0.1:2\n" + two)); err == nil || !strings.Contains(err.Error(), "both gossip on 127.0.0.1:7946") {
		t.Errorf("two pools gossiping on one address: %v", err)
	}
}

// sidecar joins the gossip pool at seed as the node id at addr, as
// "kolco members register --gossip" does, tuned as cmd/kolco's fleet
// tests are (fastGossip); Cleanup leaves.
func sidecar(t *testing.T, keys [][]byte, id, addr string, seeds ...string) *gossip.Pool {
	t.Helper()
	p, err := gossip.Join(gossip.Config{Bind: "127.0.0.1:0", Seeds: seeds, Keys: keys,
		Meta:          gossip.Meta{Role: gossip.RoleNode, Node: kolco.Node{ID: id, Addr: addr}},
		ProbeInterval: 100 * time.Millisecond, ProbeTimeout: 50 * time.Millisecond, GossipInterval: 20 * time.Millisecond,
		SuspicionMult: 8, RejoinInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// TestPoolOnGossip: a pool on a gossip pool, encrypted, serves the node
// members the sidecars register, never itself (an observer); a sidecar
// that joins or leaves changes the pool's servers, and keys set through
// the proxy land on the servers the members name. /v1/membership reports
// the gossip pool: its nodes and observers by gossip address, and the
// members gone.
func TestPoolOnGossip(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	keyFile := filepath.Join(t.TempDir(), "gossip.keys")
	if err := os.WriteFile(keyFile, []byte("# in use\nMDEyMzQ1Njc4OWFiY2RlZg==\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys := [][]byte{[]byte("0123456789abcdef")}
	seed := sidecar(t, keys, "n0", ms[0].addr)
	sidecar(t, keys, "n1", ms[1].addr, seed.Addr())
	bind := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := startProxy(t, fmt.Sprintf("kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  timeout: 10000\n"+
		"  servers:\n   - %s:1 static\n  membership: {gossip: {bind: %q, seeds: [%q], key_file: %s, probe_interval: 100, probe_timeout: 50, gossip_interval: 20, suspicion_mult: 8}}\n",
		ms[2].addr, bind, seed.Addr(), keyFile))
	eventually(t, "the members' servers served", func() bool {
		return slices.Equal(membershipOf(t, s, "p").Nodes, []string{"n0", "n1"})
	})
	first := membershipOf(t, s, "p")
	if first.Stale || !strings.HasPrefix(first.Source, "gossip at ") || first.Fingerprint == "" {
		t.Errorf("after the first version: %+v", first)
	}
	eventually(t, "the proxy counted among the pool's 3 members", func() bool { return seed.Members() == 3 })
	eventually(t, "the pool's members reported", func() bool {
		g := membershipOf(t, s, "p").Gossip
		return g != nil && len(g.Nodes) == 2 && len(g.Observers) == 1
	})
	if g := membershipOf(t, s, "p").Gossip; g.Member != g.Observers[0].Name || g.Addr != bind || g.Observers[0].Addr != bind ||
		g.Nodes[0].Name != "n0" || g.Nodes[0].Addr != seed.Addr() || g.Nodes[1].Name != "n1" || g.Alone {
		t.Errorf("/v1/membership's gossip: %+v, want the proxy at %s the observer beside n0 and n1", g, bind)
	}
	n2 := sidecar(t, keys, "n2", ms[2].addr, seed.Addr())
	eventually(t, "n2's join served", func() bool { return len(membershipOf(t, s, "p").Nodes) == 3 })
	c := dial(t, s.Addr("p").String())
	for _, k := range diffKeys(30) {
		var locs []Location
		adminGet(t, s, "/v1/pools/p/locate?key="+urlKey(k), "", &locs)
		if got := c.do("set " + k + " 0 0 1\r\nx\r\n"); got != "STORED\r\n" {
			t.Fatalf("set %q: %q", k, got)
		}
		if owner := locs[0].Servers[0]; !holds(t, &memcached{addr: owner.Addr}, k) {
			t.Errorf("%q: the admin endpoint says %s, which does not hold it", k, owner.Name)
		}
	}
	if err := n2.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "n2's leave served", func() bool {
		return slices.Equal(membershipOf(t, s, "p").Nodes, []string{"n0", "n1"})
	})
	if last := membershipOf(t, s, "p"); last.Fingerprint != first.Fingerprint {
		t.Errorf("back on n0, n1 the fingerprint is %s, was %s", last.Fingerprint, first.Fingerprint)
	}
	if g := membershipOf(t, s, "p").Gossip; g.Deaths != 1 || g.LastDeath == nil {
		t.Errorf("after n2 left, /v1/membership's gossip counts %d deaths (last %v), want 1", g.Deaths, g.LastDeath)
	}
}

// TestGossipReloadChangesSettings: a reload that changes a gossip pool's
// settings on the same address starts the new member while the old one
// holds the address: the pool serves what it served, the new member joins
// once the old one has left, and follows the pool from then on (a sidecar
// joining after is served).
func TestGossipReloadChangesSettings(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	seed := sidecar(t, nil, "n0", ms[0].addr)
	sidecar(t, nil, "n1", ms[1].addr, seed.Addr())
	bind := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	conf := func(probe int) string {
		return fmt.Sprintf("kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  timeout: 10000\n"+
			"  servers:\n   - %s:1 static\n  membership: {gossip: {bind: %q, seeds: [%q], probe_interval: %d, probe_timeout: 50, gossip_interval: 20, suspicion_mult: 8}}\n",
			ms[2].addr, bind, seed.Addr(), probe)
	}
	s := startProxy(t, conf(100))
	eventually(t, "the members' servers served", func() bool {
		return slices.Equal(membershipOf(t, s, "p").Nodes, []string{"n0", "n1"})
	})
	before := membershipOf(t, s, "p").Fingerprint

	reload(t, s, conf(150))
	if got := membershipOf(t, s, "p"); !slices.Equal(got.Nodes, []string{"n0", "n1"}) || got.Fingerprint != before {
		t.Errorf("right after the reload the pool serves %v (%s), want n0, n1 as before (%s)", got.Nodes, got.Fingerprint, before)
	}
	eventually(t, "the new member joined, the view current", func() bool {
		m := membershipOf(t, s, "p")
		return !m.Stale && slices.Equal(m.Nodes, []string{"n0", "n1"})
	})
	sidecar(t, nil, "n2", ms[2].addr, seed.Addr())
	eventually(t, "n2's join served by the new member", func() bool {
		return slices.Equal(membershipOf(t, s, "p").Nodes, []string{"n0", "n1", "n2"})
	})
}
