package proxy

import (
	"testing"

	"github.com/kolco-dev/kolco/compat/twemproxy"
)

func TestKolcoPlacementMatchesAlgorithm(t *testing.T) {
	servers := []twemproxy.Server{{Host: "127.0.0.1", Port: 11211, Weight: 1}, {Host: "127.0.0.1", Port: 11212, Weight: 2, Name: "b"}}
	cfg := &PoolConfig{Distribution: "rendezvous", HashTag: "{}"}
	p, err := newPicker(cfg, servers)
	if err != nil {
		t.Fatal(err)
	}
	k := p.(*kolcoPicker)
	for _, key := range []string{"user:1", "{tag}x", "{tag}y", "plain"} {
		tagged := string(twemproxy.Tagged([]byte(key), [2]byte{'{', '}'}))
		n, err := k.p.Locate(tagged)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := p.Index([]byte(key)), k.index[n.ID]; got != want {
			t.Errorf("Index(%q) = %d, the algorithm places it on %d", key, got, want)
		}
	}
	if p.Index([]byte("{tag}x")) != p.Index([]byte("{tag}y")) {
		t.Error("keys with the same hash tag are on different servers")
	}
}
