package proxy

import (
	"fmt"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// TestKolcoPlacementMatchesAlgorithm covers placements of several
// algorithms, every one with LocateID.
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
			p, err := newPicker(cfg, servers)
			if err != nil {
				t.Fatal(err)
			}
			k := p.(*kolcoPicker)
			if _, ok := k.p.(kolco.IDLocator); !ok || k.ids == nil {
				t.Fatalf("%s: IDLocator %v, the picker uses it: %v", dist, ok, k.ids != nil)
			}
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
				got, want := p.Index([]byte(key)), k.index[n.ID]
				if got != want {
					t.Errorf("Index(%q) = %d, the algorithm places it on %d", key, got, want)
				}
				used[got] = true
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
