package gomemcache_test

import (
	"fmt"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/gomemcache"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/compat"
)

// TestOverCompatPlacement checks a selector over a placement of the compat
// registry - twemproxy's, built from a server list as nutcracker.yml writes
// it - against one configured with the same distribution, and a
// libmemcached placement, which has no counterpart in Config, against the
// placement itself.
func TestOverCompatPlacement(t *testing.T) {
	tw, err := compat.Build("twemproxy", compat.Input{Servers: "10.0.0.1:11211:1,10.0.0.2:11212:2 cache-b", Hash: "md5", HashTag: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	over, err := gomemcache.Over(tw, "")
	if err != nil {
		t.Fatal(err)
	}
	configured, err := gomemcache.New(shards.Config{Distribution: "ketama", Hash: "md5", HashTag: "{}"},
		kolco.Node{ID: "10.0.0.1", Addr: "10.0.0.1:11211"}, kolco.Node{ID: "cache-b", Addr: "10.0.0.2:11212", Weight: 2})
	if err != nil {
		t.Fatal(err)
	}
	lm, err := compat.Build("libmemcached", compat.Input{Servers: "10.0.0.1:11211:2,10.0.0.2:11211,10.0.0.3", Distribution: "ketama_weighted"})
	if err != nil {
		t.Fatal(err)
	}
	overLM, err := gomemcache.Over(lm, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		key := fmt.Sprintf("user:{%d}:%d", i%50, i)
		if i%2 == 0 {
			key = fmt.Sprint("plain:", i)
		}
		a, _ := over.PickServer(key)
		b, _ := configured.PickServer(key)
		if a.String() != b.String() {
			t.Fatalf("%q: over the registry's twemproxy %s, configured ketama %s", key, a, b)
		}
		owner, _ := lm.Locate(key)
		want, err := gomemcache.Resolve(*owner)
		if got, _ := overLM.PickServer(key); err != nil || got.String() != want.String() {
			t.Fatalf("%q: %s, libmemcached places it on %s (%v)", key, got, want, err)
		}
	}
}
