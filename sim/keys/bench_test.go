package keys

import (
	"strconv"
	"testing"

	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/kolcotest"
)

// BenchmarkAssign places a key set on 10 nodes: a ring through its sorted
// bulk path (hashes and order cached after the first run), the others one
// Locate per key on all cores.
func BenchmarkAssign(b *testing.B) {
	for _, name := range []string{"ring", "rendezvous", "jump", "maglev"} {
		for _, n := range []int{100_000, 1_000_000} {
			b.Run(name+"/keys="+strconv.Itoa(n), func(b *testing.B) {
				b.ReportAllocs()
				ks := Synthetic(n)
				p, err := algo.New(name, kolcotest.Nodes(10), algo.Options{VNodes: 160})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Assign(p, ks); err != nil { // warm the hash cache
					b.Fatal(err)
				}
				b.ResetTimer()
				for b.Loop() {
					if _, err := Assign(p, ks); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
			})
		}
	}
}

// BenchmarkSortKeys hashes and sorts a fresh key set, the one-time cost
// of the ring's bulk path.
func BenchmarkSortKeys(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run("keys="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			p, _ := algo.New("ring", kolcotest.Nodes(10), algo.Options{VNodes: 160})
			for b.Loop() {
				ks := Synthetic(n)
				if _, err := Assign(p, ks); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
