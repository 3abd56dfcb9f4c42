package proxy

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// TestKolcoPlacementMatchesAlgorithm: for placements of several
// algorithms, a key's server index is the position, in the ID order of
// the placement's nodes, of the node the algorithm places it on.
func TestKolcoPlacementMatchesAlgorithm(t *testing.T) {
	servers := []twemproxy.Server{{Host: "127.0.0.1", Port: 11211, Weight: 1}, {Host: "127.0.0.1", Port: 11212, Weight: 2, Name: "b"}, {Host: "127.0.0.1", Port: 11213, Weight: 1}}
	for _, dist := range []string{"rendezvous", "ring", "maglev", "jump"} {
		t.Run(dist, func(t *testing.T) {
			cfg := &PoolConfig{Distribution: dist, HashTag: "{}"}
			servers := servers
			if dist == "jump" { // jump takes no weights
				servers = append([]twemproxy.Server(nil), servers...)
				servers[1].Weight = 1
			}
			cfg.Servers = servers
			p, err := newPicker(cfg, cfg.nodes())
			if err != nil {
				t.Fatal(err)
			}
			k := p.(*kolcoPicker)
			nodes := k.p.Nodes()
			keys := []string{"{tag}x", "{tag}y", "plain"}
			for i := range 300 {
				keys = append(keys, fmt.Sprintf("user:%d", i))
			}
			used := map[int]bool{}
			for _, key := range keys {
				tagged := string(twemproxy.Tagged([]byte(key), [2]byte{'{', '}'}))
				n, err := k.p.Locate(tagged)
				if err != nil {
					t.Fatal(err)
				}
				want := slices.IndexFunc(nodes, func(m kolco.Node) bool { return m.ID == n.ID })
				if got := p.Index([]byte(key)); got != want || got < 0 {
					t.Errorf("Index(%q) = %d, the algorithm places it on %q, at %d in ID order", key, got, n.ID, want)
				}
				used[want] = true
			}
			if len(used) != len(servers) {
				t.Errorf("300 keys went to %d of %d servers", len(used), len(servers))
			}
			if p.Index([]byte("{tag}x")) != p.Index([]byte("{tag}y")) {
				t.Error("keys with the same hash tag are on different servers")
			}
		})
	}
}
