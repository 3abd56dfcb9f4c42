package rendezvous_test

import (
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/rendezvous"
)

// FuzzOps runs arbitrary membership changes and lookups, including the
// degenerate sets (empty, all removed, n > nodes), checking that nothing
// panics and every error is a sentinel.
func FuzzOps(f *testing.F) {
	kolcotest.FuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		kolcotest.Ops(t, kolcotest.Algorithm{
			Name: "rendezvous",
			New:  func(nodes []kolco.Node) (kolco.Placement, error) { return rendezvous.New(nodes, rendezvous.Config{}) },
		}, data)
	})
}

// FuzzSeparator checks separator mode against the straightforward score,
// hash(ID + sep + key) (fnv1a being weak, finalized with fmix64), for any
// separator and key, including joins longer than the stack buffer.
func FuzzSeparator(f *testing.F) {
	f.Add(":", "user:42")
	f.Add("", "x")
	f.Add("/", strings.Repeat("k", 600))
	f.Add(strings.Repeat("s", 300), strings.Repeat("k", 300))
	nodes := kolcotest.Nodes(5)
	f.Fuzz(func(t *testing.T, sep, key string) {
		cfg := rendezvous.Config{Hash: keyhash.FNV1a, Separator: sep}
		r, err := rendezvous.New(nodes, cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Locate(key)
		if err != nil {
			t.Fatal(err)
		}
		want, best := "", uint64(0)
		for _, n := range nodes {
			var s uint64
			if sep == "" {
				s = fmix(keyhash.FNV1a(key) ^ fmix(keyhash.FNV1a(n.ID)))
			} else {
				s = fmix(keyhash.FNV1a(n.ID + sep + key))
			}
			if want == "" || s > best || (s == best && n.ID < want) {
				want, best = n.ID, s
			}
		}
		if got.ID != want {
			t.Fatalf("Locate(%q) with separator %q = %s, want %s", key, sep, got.ID, want)
		}
	})
}
