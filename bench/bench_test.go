package bench

import (
	"fmt"
	"testing"
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
					benchLoop(b, inst.Loop)
				})
			}
		}
	}
}

// BenchmarkHashAlone is the baseline of the lookup targets: the default
// key hash of each key, and nothing else.
func BenchmarkHashAlone(b *testing.B) { benchLoop(b, HashAlone) }

// benchLoop runs loop over benchKeys a chunk at a time, cycling; b.N
// counts keys, so ns/op is per lookup.
func benchLoop(b *testing.B, loop Loop) {
	b.ReportAllocs()
	i, acc := 0, 0
	for done := 0; done < b.N; {
		var part []string
		part, i = next(benchKeys, i)
		part = part[:min(len(part), b.N-done)]
		acc += loop(part)
		done += len(part)
	}
	sink.Add(int64(acc))
}

func vnodeSettings(l Lib) []int {
	if !l.Configurable {
		return []int{l.DefaultVNodes}
	}
	return []int{l.DefaultVNodes, 100, 1000}
}

// BenchmarkScale runs kolco's consistent hashes at 10 to a million nodes
// (cmd/compare -scale prints them as a table). With -short only 1000
// nodes run, so CI can check that each still builds and looks up.
func BenchmarkScale(b *testing.B) {
	for _, n := range []int{10, 1000, 100_000, 1_000_000} {
		if testing.Short() && n != 1000 {
			continue
		}
		ids := NodeIDs(n)
		for _, l := range ScaleLibs() {
			b.Run(fmt.Sprintf("nodes=%d/%s", n, l.Name), func(b *testing.B) {
				loop, err := l.New(ids)
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer() // the build is not a lookup
				benchLoop(b, loop)
			})
		}
	}
}
