package bench

import (
	"fmt"
	"testing"
)

var benchKeys = Keys(1 << 16)

// builds keeps every library built by the benchmarks, so that -count
// repeats measure the same instances and builds that take minutes
// (buraksezer/consistent and stathat/consistent at 10,000 nodes) are paid
// once per process.
var builds Builds

// BenchmarkLookup runs every library at 10, 100, 1000 and 10,000 nodes,
// at its default points per node and, where configurable, at 100 and 1000,
// and the kolco ring also at 20, the default of buraksezer/consistent and
// stathat/consistent: at equal points. Libraries that re-sort all points
// per added node are built as [Lib.Fits] allows. With -short only 100
// nodes at the defaults run, so CI can check that every library still
// builds and looks up. Besides wall time it reports cpu-ns/op, the
// measuring thread's CPU time per lookup, which a busy machine disturbs
// less.
func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		if testing.Short() && n != 100 {
			continue
		}
		for _, l := range Libs() {
			for _, v := range vnodeSettings(l) {
				if !l.Fits(n, v) || testing.Short() && v != l.DefaultVNodes {
					continue // see Lib.Fits: such builds take hours
				}
				b.Run(fmt.Sprintf("nodes=%d/%s/vnodes=%d", n, l.Short, v), func(b *testing.B) {
					inst, err := builds.Get(l, n, v)
					if err != nil {
						b.Fatal(err)
					}
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
// counts keys, so ns/op is per lookup. It also reports cpu-ns/op.
func benchLoop(b *testing.B, loop Loop) {
	b.ReportAllocs()
	now, done := clock()
	defer done()
	b.ResetTimer()
	start := now()
	i, acc := 0, 0
	for done := 0; done < b.N; {
		var part []string
		part, i = next(benchKeys, i)
		part = part[:min(len(part), b.N-done)]
		acc += loop(part)
		done += len(part)
	}
	if cpu := now() - start; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	sink.Add(int64(acc))
}

func vnodeSettings(l Lib) []int {
	switch {
	case !l.Configurable:
		return []int{l.DefaultVNodes}
	case l.Kolco:
		return []int{l.DefaultVNodes, 20, 100, 1000}
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
				benchLoop(b, loop)
			})
		}
	}
}

// BenchmarkRemovals runs kolco's placements that keep a table of removed
// nodes (RemovalLibs) at 100, 1000 and 10,000 nodes, as built and with 10% of the nodes
// removed at random: what removals cost a lookup. With -short only 1000
// nodes run.
func BenchmarkRemovals(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		if testing.Short() && n != 1000 {
			continue
		}
		ids := NodeIDs(n)
		for _, l := range RemovalLibs() {
			for _, share := range []float64{0, 0.1} {
				b.Run(fmt.Sprintf("nodes=%d/%s/removed=%d%%", n, l.Name, int(100*share)), func(b *testing.B) {
					loop, err := l.Removed(ids, share)
					if err != nil {
						b.Fatal(err)
					}
					benchLoop(b, loop)
				})
			}
		}
	}
}
