package bench

import (
	"fmt"
	"testing"

	"github.com/kolco-dev/kolco/keyhash"
)

var benchKeys = Keys(1 << 16)

// BenchmarkLookup runs every library at 10, 100 and 1000 nodes, at its
// default points per node and, where configurable, at 100 and 1000. With
// -short only 100 nodes at the defaults run, so CI can check that every
// library still builds and looks up.
func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		if testing.Short() && n != 100 {
			continue
		}
		ids := NodeIDs(n)
		for _, l := range Libs() {
			for _, v := range vnodeSettings(l) {
				if l.SortsPerNode && n*n*max(v, 1) > 20_000_000 || testing.Short() && v != l.DefaultVNodes {
					continue // see cmd/compare: such builds take minutes
				}
				inst, err := l.New(ids, v)
				if err != nil {
					b.Fatal(err)
				}
				b.Run(fmt.Sprintf("nodes=%d/%s/vnodes=%d", n, l.Short, v), func(b *testing.B) {
					b.ReportAllocs()
					i, acc := 0, 0
					for b.Loop() {
						acc += len(inst.Lookup(benchKeys[i&(len(benchKeys)-1)]))
						i++
					}
					sink.Add(int64(acc))
				})
			}
		}
	}
}

// BenchmarkHashAlone is the baseline of the ring's lookup target: the same
// key hash called through a function value, and nothing else.
func BenchmarkHashAlone(b *testing.B) {
	b.ReportAllocs()
	f := HashAlone()
	i, acc := 0, 0
	for b.Loop() {
		acc += len(f(benchKeys[i&(len(benchKeys)-1)]))
		i++
	}
	sink.Add(int64(acc))
}

// BenchmarkHashDirect is the key hash called directly.
func BenchmarkHashDirect(b *testing.B) {
	b.ReportAllocs()
	var s uint64
	i := 0
	for b.Loop() {
		s += keyhash.XXH3(benchKeys[i&(len(benchKeys)-1)])
		i++
	}
	sink.Add(int64(s))
}

func vnodeSettings(l Lib) []int {
	if !l.Configurable {
		return []int{l.DefaultVNodes}
	}
	return []int{l.DefaultVNodes, 100, 1000}
}
