package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/anchor"
	"github.com/kolco-dev/kolco/bench"
	"github.com/kolco-dev/kolco/dx"
)

// removalSizes are the node counts of the removals table.
var removalSizes = []int{100, 1000, 10000}

// removalsTable measures what removals cost a lookup: each placement of
// bench.RemovalLibs as built and with 10% of its nodes removed at random,
// all of one size timed in interleaved rounds, and their ratio; and dx
// against anchor, both as built.
func removalsTable(d time.Duration, rounds int) error {
	libs := bench.RemovalLibs()
	keys := bench.Keys(1 << 16)
	none := make([][]float64, len(libs))
	some := make([][]float64, len(libs))
	for _, n := range removalSizes {
		ids := bench.NodeIDs(n)
		var loops []bench.Loop
		for _, l := range libs {
			for _, share := range []float64{0, 0.1} {
				loop, err := l.Removed(ids, share)
				if err != nil {
					return fmt.Errorf("%s: %w", l.Name, err)
				}
				loops = append(loops, loop)
			}
		}
		ns := bench.Interleaved(loops, keys, d, rounds)
		for i := range libs {
			none[i] = append(none[i], ns[2*i])
			some[i] = append(some[i], ns[2*i+1])
		}
	}
	fmt.Printf("\nLookups after removals, over %d keys: ns per `Locate` with no node removed and with 10%% of the nodes removed at random (CPU time, the median of %d interleaved rounds of %v), and their ratio (goal for the jump family: at most 1.2x):\n\n", len(keys), rounds, d)
	var head, rule strings.Builder
	for _, n := range removalSizes {
		fmt.Fprintf(&head, " %d nodes |", n)
		rule.WriteString("--:|")
	}
	fmt.Printf("| algorithm |%s\n|---|%s\n", head.String(), rule.String())
	anchorAt, dxAt := -1, -1
	for i, l := range libs {
		cells := []string{l.Name}
		for k := range removalSizes {
			cells = append(cells, fmt.Sprintf("%.1f -> %.1f: %.2fx", none[i][k], some[i][k], some[i][k]/none[i][k]))
		}
		fmt.Println("| " + strings.Join(cells, " | ") + " |")
		switch l.Name {
		case "anchor":
			anchorAt = i
		case "dx":
			dxAt = i
		}
	}
	if anchorAt >= 0 && dxAt >= 0 {
		var cells []string
		for k, n := range removalSizes {
			cells = append(cells, fmt.Sprintf("%d nodes %.2fx", n, none[dxAt][k]/none[anchorAt][k]))
		}
		fmt.Printf("\ndx against anchor, both as built (goal: at most 1.2x): %s.\n", strings.Join(cells, ", "))
	}
	return dxAgainstAnchor(d, rounds)
}

// dxAgainstAnchor measures what makes dx cost more than anchor: both at
// 1024 nodes, at their default capacities (2048 slots and buckets: a dx
// lookup probes 2 slots on average, each a CRC-32C step, where an anchor
// lookup makes 1 + ln 2 = 1.69 hops, each a SplitMix64 mix) and at a
// capacity of 1024, every slot and bucket working (one probe, one hop).
func dxAgainstAnchor(d time.Duration, rounds int) error {
	nodes := make([]kolco.Node, 1024)
	for i, id := range bench.NodeIDs(len(nodes)) {
		nodes[i] = kolco.Node{ID: id}
	}
	var loops []bench.Loop
	for _, c := range []int{0, 1024} {
		a, err := anchor.New(nodes, anchor.Config{Capacity: c})
		if err != nil {
			return err
		}
		x, err := dx.New(nodes, dx.Config{Capacity: c})
		if err != nil {
			return err
		}
		loops = append(loops, bench.LocateLoop(a), bench.LocateLoop(x))
	}
	ns := bench.Interleaved(append([]bench.Loop{bench.HashAlone}, loops...), bench.Keys(1<<16), d, rounds)
	fmt.Printf("\ndx against anchor at 1024 nodes, ns per `Locate` (CPU time, medians of %d interleaved rounds; the key hash alone %.1f): "+
		"default capacities (2048), anchor %.1f, dx %.1f: %.2fx; capacity 1024, every slot working, anchor %.1f, dx %.1f: %.2fx.\n",
		rounds, ns[0], ns[1], ns[2], ns[2]/ns[1], ns[3], ns[4], ns[4]/ns[3])
	return nil
}
