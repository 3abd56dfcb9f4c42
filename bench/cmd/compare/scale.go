package main

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/bench"
)

// scaleSizes are the node counts of the scale table.
var scaleSizes = []int{10, 1000, 100_000, 1_000_000}

// scaleTable measures kolco's constant-time consistent hashes beside jump,
// anchor and maglev from 10 to a million nodes: all placements of one size
// are built (each one's heap growth measured), then timed in interleaved
// rounds over bigKeys keys, so that at a million nodes most lookups read
// buckets outside the caches.
func scaleTable(d time.Duration, rounds int) error {
	libs := bench.ScaleLibs()
	keys := bench.Keys(bigKeys)
	ns := make([][]float64, len(libs))
	perNode := make([]float64, len(libs))
	build := make([]time.Duration, len(libs))
	var allocs float64
	for _, n := range scaleSizes {
		ids := bench.NodeIDs(n)
		loops := make([]bench.Loop, len(libs))
		for i, l := range libs {
			t0 := time.Now()
			loop, b, err := bench.HeapBytes(func() (bench.Loop, error) { return l.New(ids) })
			if err != nil {
				return fmt.Errorf("%s: %w", l.Name, err)
			}
			if n == scaleSizes[len(scaleSizes)-1] {
				perNode[i], build[i] = float64(b)/float64(n), time.Since(t0)
			}
			if n == 1000 {
				allocs = max(allocs, bench.Allocs(loop, keys))
			}
			loops[i] = loop
		}
		for i, v := range bench.Interleaved(loops, keys, d, rounds) {
			ns[i] = append(ns[i], v)
		}
		loops = nil
		runtime.GC()
	}
	fmt.Printf("\nkolco's consistent hashes from 10 to a million nodes over %d keys \"user:<i>\": ns per `Locate` (CPU time, the median of %d interleaved rounds of %v; at most %v allocations a lookup), and heap bytes per node and build time (wall) at a million nodes:\n\n", len(keys), rounds, d, allocs)
	var head, rule strings.Builder
	for _, n := range scaleSizes {
		fmt.Fprintf(&head, " %d nodes |", n)
		rule.WriteString("--:|")
	}
	fmt.Printf("| algorithm |%s heap bytes per node | build, %d nodes |\n", head.String(), scaleSizes[len(scaleSizes)-1])
	fmt.Printf("|---|%s--:|--:|\n", rule.String())
	for i, l := range libs {
		cells := []string{l.Name}
		for _, v := range ns[i] {
			cells = append(cells, fmt.Sprintf("%.1f", v))
		}
		cells = append(cells, fmt.Sprintf("%.0f", perNode[i]), dur(build[i]))
		fmt.Println("| " + strings.Join(cells, " | ") + " |")
	}
	fmt.Printf("\nmaglev has %d entries above 1000 nodes (see bench.BigTable), its default 65537 below.\n", bench.BigTable)
	return nil
}
