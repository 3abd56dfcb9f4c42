// Command compare prints kolco's placements side by side with the Go
// consistent hashing libraries users would otherwise pick, as markdown:
// the machine, one table of every library, and the ring's targets as ratios
// measured in this one run.
//
//	cd bench && go run ./cmd/compare [-d 10ms] [-rounds 5] [-targets | -scale | -removals]
//
// Lookups of all libraries of one size are measured in interleaved rounds
// and the median round of each is kept, so that a neighbour's load on a
// shared machine slows every library alike instead of one of them.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/bench"
)

func main() {
	d := flag.Duration("d", 10*time.Millisecond, "time per library per round of lookups")
	rounds := flag.Int("rounds", 5, "interleaved rounds; the median is kept (the targets run twice as many)")
	only := flag.Bool("targets", false, "measure only the ring's targets, not the table of libraries")
	scale := flag.Bool("scale", false, "measure only the consistent hashes from 10 to a million nodes, and removals")
	removals := flag.Bool("removals", false, "measure only lookups after removals, and dx against anchor")
	flag.Parse()
	var err error
	switch {
	case *removals:
		fmt.Println(machine())
		err = removalsTable(*d, *rounds)
	case *scale:
		fmt.Println(machine())
		if err = scaleTable(*d, *rounds); err == nil {
			err = removalsTable(*d, *rounds)
		}
	default:
		err = run(*d, *rounds, *only)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func run(d time.Duration, rounds int, onlyTargets bool) error {
	start := time.Now()
	fmt.Println(machine())
	keys := bench.Keys(1 << 16)
	if !onlyTargets {
		rows, err := lookupTable(keys, d, rounds)
		if err != nil {
			return err
		}
		if err := changeColumns(rows); err != nil {
			return err
		}
		printTable(rows)
		printRingRatios(rows)
		if err := scaleTable(d, rounds); err != nil {
			return err
		}
		if err := removalsTable(d, rounds); err != nil {
			return err
		}
	}
	if err := targets(keys, d, rounds); err != nil {
		return err
	}
	fmt.Printf("\nWhole comparison: %.0f s.\n", time.Since(start).Seconds())
	return nil
}

func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	load := ""
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = ", load average " + strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return fmt.Sprintf("Machine: %s, %d cores (GOMAXPROCS %d), %s, %s/%s%s, %s.\n",
		cpu, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH,
		load, time.Now().UTC().Format("2006-01-02 15:04 MST"))
}

// sizes are the node counts of the lookup columns.
var sizes = []int{10, 100, 1000, 10000}

// builds keeps every library built for the lookup table, for the targets
// to measure again without building again.
var builds bench.Builds

// row is one library at one points-per-node setting.
type row struct {
	lib    bench.Lib
	vnodes int
	label  string
	ns     map[int]float64 // by node count; missing = skipped
	allocs float64
	bytes  float64 // heap bytes per point at the largest size built
	bytesN int     // the node count bytes was measured at
	build  time.Duration
	add    time.Duration
	load   float64
	moved  float64
}

func (r *row) fits(nodes int) bool { return r.lib.Fits(nodes, r.vnodes) }

// newRows returns a row per library at its default points, and per
// configurable library at 100 and 1000 points; the kolco ring also at 20,
// the default of buraksezer/consistent and stathat/consistent.
func newRows() []*row {
	var rows []*row
	for _, setting := range []int{0, 20, 100, 1000} {
		for _, l := range bench.Libs() {
			if setting != 0 && !l.Configurable || setting == 20 && !l.Kolco {
				continue
			}
			r := &row{lib: l, vnodes: setting, label: fmt.Sprint(setting), ns: map[int]float64{}}
			switch {
			case setting == 0 && l.DefaultVNodes == 0:
				r.label = "-"
			case setting == 0:
				r.vnodes, r.label = l.DefaultVNodes, fmt.Sprintf("%d (default)", l.DefaultVNodes)
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// lookupTable measures lookups size by size: all libraries of one size are
// built (each one's heap growth measured), then timed in interleaved rounds.
func lookupTable(keys []string, d time.Duration, rounds int) ([]*row, error) {
	rows := newRows()
	for _, n := range sizes {
		var live []*row
		var loops []bench.Loop
		for _, r := range rows {
			if !r.fits(n) {
				continue
			}
			inst, b, err := bench.HeapBytes(func() (bench.Instance, error) { return builds.Get(r.lib, n, r.vnodes) })
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.lib.Name, err)
			}
			r.bytes, r.bytesN = float64(b)/float64(inst.Points), n
			if n == 100 {
				r.allocs = bench.Allocs(inst.Loop, keys)
			}
			live = append(live, r)
			loops = append(loops, inst.Loop)
		}
		med := bench.Interleaved(loops, keys, d, rounds)
		for i, r := range live {
			r.ns[n] = med[i]
		}
	}
	return rows, nil
}

// changeColumns measures build and add-one at 100 nodes, and balance and
// movement from 10 to 11 nodes over 100k keys.
func changeColumns(rows []*row) error {
	ids100, ids10, ids11 := bench.NodeIDs(100), bench.NodeIDs(10), bench.NodeIDs(11)
	keys := bench.Keys(100_000)
	for _, r := range rows {
		var err error
		r.build, err = bench.MinDuration(5, func() error { _, err := r.lib.New(ids100, r.vnodes); return err })
		if err != nil {
			return fmt.Errorf("%s: %w", r.lib.Name, err)
		}
		if r.add, err = bench.TimeAdd(r.lib, ids100, r.vnodes, 5); err != nil {
			return fmt.Errorf("%s: %w", r.lib.Name, err)
		}
		before, err := r.lib.New(ids10, r.vnodes)
		if err != nil {
			return err
		}
		after, err := r.lib.New(ids11, r.vnodes)
		if err != nil {
			return err
		}
		r.load = bench.Balance(before.Lookup, keys, 10)
		r.moved = bench.Moved(before.Lookup, after.Lookup, keys)
	}
	return nil
}

func printTable(rows []*row) {
	fmt.Println("| library | points per node | lookup ns, 10 nodes | 100 nodes | 1000 nodes | 10 000 nodes | allocs per lookup | build, 100 nodes | add 101st node | heap bytes per point | max/avg load, 10 nodes | moved 10 -> 11 |")
	fmt.Println("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range rows {
		cells := []string{r.lib.Name, r.label}
		for _, n := range sizes {
			if ns, ok := r.ns[n]; ok {
				cells = append(cells, fmt.Sprintf("%.1f", ns))
			} else {
				cells = append(cells, "skipped¹")
			}
		}
		cells = append(cells, fmt.Sprintf("%.2g", r.allocs), dur(r.build), dur(r.add),
			fmt.Sprintf("%.1f (%d nodes)", r.bytes, r.bytesN), fmt.Sprintf("%.3f", r.load), fmt.Sprintf("%.3f", r.moved))
		fmt.Println("| " + strings.Join(cells, " | ") + " |")
	}
	fmt.Printf("\n¹ Not built: this library re-sorts all its points for every node it adds, so a build of N nodes costs N·P·log P; sizes with N²·P above %d are skipped (above %d for its default points) to keep the run within minutes.\n", bench.BuildBudget, bench.DefaultBuildBudget)
	fmt.Println("Lookups: the median of interleaved rounds over 65536 keys \"user:<i>\", each library called directly in a loop as a program calls it. Heap bytes per point: live heap after GC, before and after building, over points (nodes for the non-ring placements). Build and add: the fastest of 5, wall time. Load and movement: 100k keys.")
}

// printRingRatios prints how many times faster than buraksezer/consistent
// the kolco ring looks up, at each size, from the rows of the table: each
// library at its default points (the ring's 160 against buraksezer's 20),
// and both at equal points.
func printRingRatios(rows []*row) {
	find := func(short string, v int) *row {
		for _, r := range rows {
			if r.lib.Short == short && r.vnodes == v {
				return r
			}
		}
		return nil
	}
	var ringDef, burDef int
	for _, l := range bench.Libs() {
		switch l.Short {
		case "kolco-ring":
			ringDef = l.DefaultVNodes
		case "buraksezer":
			burDef = l.DefaultVNodes
		}
	}
	fmt.Println("\nThe kolco ring against buraksezer/consistent, the fastest other ring library, from the table above (goal: at least 5x at every size):")
	fmt.Println()
	var head, rule strings.Builder
	for _, n := range sizes {
		fmt.Fprintf(&head, " %d nodes |", n)
		rule.WriteString("--:|")
	}
	fmt.Printf("| points per node: ring, buraksezer |%s\n|---|%s\n", head.String(), rule.String())
	for _, p := range [][2]int{{ringDef, burDef}, {20, 20}, {100, 100}, {1000, 1000}} {
		k, b := find("kolco-ring", p[0]), find("buraksezer", p[1])
		if k == nil || b == nil {
			continue
		}
		cells := []string{fmt.Sprintf("%d, %d", p[0], p[1])}
		for _, n := range sizes {
			kn, ok1 := k.ns[n]
			bn, ok2 := b.ns[n]
			if ok1 && ok2 {
				cells = append(cells, fmt.Sprintf("%.1fx (%.1f vs %.1f ns)", bn/kn, kn, bn))
			} else {
				cells = append(cells, "-")
			}
		}
		fmt.Println("| " + strings.Join(cells, " | ") + " |")
	}
}

func dur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
	default:
		return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1000)
	}
}
