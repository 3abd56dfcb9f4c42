package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/bench"
)

// removalSizes are the node counts of the removals table.
var removalSizes = []int{100, 1000, 10000}

// removalsTable measures what removals cost a lookup: each placement of
// bench.ScaleLibs as built and with 10% of its nodes removed at random,
// all of one size timed in interleaved rounds, and their ratio; and dx
// against anchor, both as built.
func removalsTable(d time.Duration, rounds int) error {
	libs := bench.ScaleLibs()
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
	return nil
}
