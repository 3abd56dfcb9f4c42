package main

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/bench"
	"github.com/kolco-dev/kolco/maglev"
	"github.com/kolco-dev/kolco/ring"
)

// targets measures the ring's performance targets, each as a ratio of two
// figures measured in this run, and prints them as a table.
func targets(keys []string, d time.Duration, rounds int) error {
	fmt.Println("\n### Targets (ratios within this run)")
	fmt.Println()
	fmt.Printf("Lookups over the %d keys of the table above. ", len(keys))
	if err := lookupTargets(keys, d, 2*rounds); err != nil {
		return err
	}
	if err := memoryTarget(); err != nil {
		return err
	}
	if err := addTarget(keys); err != nil {
		return err
	}
	scaleTarget(keys)
	return nil
}

// lookupRow is one loop of the targets' lookup tables.
type lookupRow struct {
	name string
	loop bench.Loop
}

// bigKeys is the number of keys of the million-point comparison: enough
// that the cache lines either row touches (64 MB at one line a key) fit in
// no cache, so that both rows read memory. With the 65,536 keys of the
// other rows, the table row, faster, makes more passes over its keys in a
// round and finds more of its lines cached than the ring does.
const bigKeys = 1 << 20

func lookupTargets(keys []string, d time.Duration, rounds int) error {
	ring100, err := newRing(100, 160)
	if err != nil {
		return err
	}
	mg, err := maglev.New(nodes(bench.NodeIDs(100), 1), maglev.Config{})
	if err != nil {
		return err
	}
	rows := []lookupRow{
		{"hash alone: keyhash.XXH3 of each key", bench.HashAlone},
		{"kolco ring `Locate`, 100 nodes × 160 points", bench.RingLocate(ring100)},
		{"kolco ring `LocateID`, 100 × 160", bench.RingLocateID(ring100)},
		{"kolco maglev `Locate`, 100 nodes (65537 entries)", bench.MaglevLocate(mg)},
		{"kolco maglev `LocateID`, 100 nodes", bench.MaglevLocateID(mg)},
	}
	for _, n := range []int{1000, 10000} {
		r, err := newRing(n, 160)
		if err != nil {
			return err
		}
		rows = append(rows, lookupRow{fmt.Sprintf("kolco ring `Locate`, %d × 160", n), bench.RingLocate(r)})
	}
	rows = append(rows,
		lookupRow{"floor: hash, then 1 random read in a 256 KB table (the size of 100 × 160)", bench.RandomReads(256<<10, 1)},
		// The slot tables of 1000 × 160 and 10,000 × 160 (5 bytes a point):
		// what any lookup that reads such a table pays at least, to set
		// beside a fifth of buraksezer/consistent's lookup.
		lookupRow{"floor: hash, then 1 random read in a 1 MB table (the slot table of 1000 × 160 is 0.8 MB)", bench.RandomReads(1<<20, 1)},
		lookupRow{"floor: hash, then 1 random read in an 8 MB table (the slot table of 10000 × 160)", bench.RandomReads(8<<20, 1)},
	)
	firstLib := len(rows)
	for _, l := range bench.Libs() {
		if !l.Ring || l.Kolco {
			continue
		}
		inst, err := l.New(bench.NodeIDs(100), 160)
		if err != nil {
			return err
		}
		rows = append(rows, lookupRow{l.Name + ", 100 × 160", inst.Loop})
	}
	ns := measureRows(rows, keys, d, rounds)
	fmt.Println()
	big, err := newRing(1000, 1000)
	if err != nil {
		return err
	}
	million := []lookupRow{
		{"kolco ring `Locate`, 1000 × 1000 (a million points)", bench.RingLocate(big)},
		{"floor: hash, then 1 random read in a 16 MB table (the size of a million points)", bench.RandomReads(16<<20, 1)},
		{"floor: hash, then 2 dependent random reads in the 16 MB table", bench.RandomReads(16<<20, 2)},
	}
	fmt.Printf("The million-point ring and its floors over %d keys (see bigKeys in targets.go):\n\n", bigKeys)
	big3 := measureRows(million, bench.Keys(bigKeys), d, rounds)
	printLookupTargets(rows, ns, firstLib, big3)
	return nil
}

func newRing(n, v int) (*ring.Ring, error) {
	return ring.New(nodes(bench.NodeIDs(n), 1), ring.Config{VNodes: v})
}

// measureRows times rows in interleaved rounds and prints each one's
// median, with the allocations of the kolco rows.
func measureRows(rows []lookupRow, keys []string, d time.Duration, rounds int) []float64 {
	loops := make([]bench.Loop, len(rows))
	var kolcoLoops []bench.Loop
	for i, r := range rows {
		loops[i] = r.loop
		if strings.HasPrefix(r.name, "kolco") {
			kolcoLoops = append(kolcoLoops, r.loop)
		}
	}
	ns := bench.Interleaved(loops, keys, d, rounds)
	fmt.Printf("Each the median of %d interleaved rounds of %v (CPU time), ns per lookup; every kolco row allocates %v times per lookup:\n\n", rounds, d, maxAllocs(kolcoLoops, keys))
	fmt.Println("| lookup | ns |")
	fmt.Println("|---|--:|")
	for i, r := range rows {
		fmt.Printf("| %s | %.1f |\n", r.name, ns[i])
	}
	return ns
}

// printLookupTargets prints the lookup targets as ratios of rows measured
// together: ns of rows (row 0 the hash, 1 the ring's Locate, 3 maglev's,
// other ring libraries from firstLib) and big of the million-point rows.
func printLookupTargets(rows []lookupRow, ns []float64, firstLib int, big []float64) {
	fastest := firstLib
	for i := firstLib + 1; i < len(rows); i++ {
		if ns[i] < ns[fastest] {
			fastest = i
		}
	}
	fmt.Println()
	fmt.Println("| target | measured | goal |")
	fmt.Println("|---|---|---|")
	fmt.Printf("| ring `Locate`, 100 × 160, vs hashing the same keys alone | %.1f ns vs %.1f ns: %.2fx | <= 3x |\n", ns[1], ns[0], ns[1]/ns[0])
	fmt.Printf("| maglev `Locate`, 100 nodes, vs hashing the same keys alone | %.1f ns vs %.1f ns: %.2fx | <= 3x |\n", ns[3], ns[0], ns[3]/ns[0])
	fmt.Printf("| ring `Locate`, a million points (1000 × 1000), vs the floor of one random read in 16 MB | %.1f ns vs %.1f ns: %.2fx | <= 1.5x |\n", big[0], big[1], big[0]/big[1])
	fmt.Printf("| ring `Locate`, 100 × 160, vs the fastest other ring library at 100 × 160 (%s) | %.1f ns vs %.1f ns: %.1fx faster | >= 5x |\n",
		strings.TrimSuffix(rows[fastest].name, ", 100 × 160"), ns[1], ns[fastest], ns[fastest]/ns[1])
}

// maxAllocs returns the most allocations per lookup of any of loops.
func maxAllocs(loops []bench.Loop, keys []string) float64 {
	most := 0.0
	for _, l := range loops {
		most = max(most, bench.Allocs(l, keys))
	}
	return most
}

func memoryTarget() error {
	for _, c := range []struct{ n, v int }{{100, 160}, {1000, 1000}} {
		ids := bench.NodeIDs(c.n)
		r, b, err := bench.HeapBytes(func() (*ring.Ring, error) { return ring.New(nodes(ids, 1), ring.Config{VNodes: c.v}) })
		if err != nil {
			return err
		}
		fmt.Printf("| heap bytes per point, %d × %d, index included | %.2f | <= 16 |\n", c.n, c.v, float64(b)/float64(r.Points()))
	}
	return nil
}

// addTarget adds a node of 1000 points to a ring of 1000 nodes × 100
// points, compares it with building the resulting ring from scratch, and
// measures lookups while nodes come and go.
func addTarget(keys []string) error {
	cfg := ring.Config{VNodes: 100}
	base := nodes(bench.NodeIDs(1000), 1)
	extra := kolco.Node{ID: bench.NewNodeID(0), Weight: 10} // 10 × 100 = 1000 points
	r, err := ring.New(base, cfg)
	if err != nil {
		return err
	}
	add := time.Duration(-1)
	for range 7 {
		t0 := time.Now()
		if err := r.Add(extra); err != nil {
			return err
		}
		if el := time.Since(t0); add < 0 || el < add {
			add = el
		}
		if err := r.Remove(extra.ID); err != nil {
			return err
		}
	}
	all := append(append([]kolco.Node(nil), base...), extra)
	build, err := bench.MinDuration(7, func() error { _, err := ring.New(all, cfg); return err })
	if err != nil {
		return err
	}
	fmt.Printf("| add one node of 1000 points to 1000 × 100 (100k points) vs building the 101k-point ring | %s vs %s: %.1fx faster | >= 10x |\n",
		dur(add), dur(build), float64(build)/float64(add))

	quiet, err := bench.LookupsDuringChanges(bench.RingLocate(r), keys, nil, time.Second)
	if err != nil {
		return err
	}
	busy, err := bench.LookupsDuringChanges(bench.RingLocate(r), keys, func(i int) error {
		if i%2 == 0 {
			return r.Add(extra)
		}
		return r.Remove(extra.ID)
	}, time.Second)
	if err != nil {
		return err
	}
	fmt.Printf("| lookups on that ring while another goroutine adds and removes that node without pause (%d changes in 1 s), per lookup: CPU time; wall time mean, 99.9th percentile and worst of batches of %d | %.1f ns CPU; %.1f / %.1f / %.1f ns wall. Without changes: %.1f ns CPU; %.1f / %.1f / %.1f ns wall | no stall |\n",
		busy.Changes, 1024, busy.MeanCPUNs, busy.MeanNs, busy.P999BatchNs, busy.WorstBatchNs,
		quiet.MeanCPUNs, quiet.MeanNs, quiet.P999BatchNs, quiet.WorstBatchNs)
	return nil
}

func scaleTarget(keys []string) {
	r, err := ring.New(nodes(bench.NodeIDs(100), 1), ring.Config{VNodes: 160})
	if err != nil {
		return
	}
	procs := runtime.GOMAXPROCS(0)
	var one, all, cost1, costN float64
	for range 5 {
		one = max(one, bench.Throughput(bench.RingLocate(r), keys, 1, 500*time.Millisecond))
		all = max(all, bench.Throughput(bench.RingLocate(r), keys, procs, 500*time.Millisecond))
		c1 := bench.ParallelCost(bench.RingLocate(r), keys, 1, 200*time.Millisecond)
		cN := bench.ParallelCost(bench.RingLocate(r), keys, procs, 200*time.Millisecond)
		if cost1 == 0 || c1 < cost1 {
			cost1 = c1
		}
		if costN == 0 || cN < costN {
			costN = cN
		}
	}
	fmt.Printf("| lookups per second, 100 × 160, %d goroutines vs 1, wall clock (best of 5 × 0.5 s; counts the time other processes hold the cores) | %.1fM vs %.1fM: %.2fx | >= 1.8x on 2 cores |\n",
		procs, all/1e6, one/1e6, all/one)
	var hOne, hAll float64
	for range 5 {
		hOne = max(hOne, bench.Throughput(bench.HashAlone, keys, 1, 300*time.Millisecond))
		hAll = max(hAll, bench.Throughput(bench.HashAlone, keys, procs, 300*time.Millisecond))
	}
	fmt.Printf("| control: the same for hashing the key alone, which shares no memory at all | %.1fM vs %.1fM: %.2fx | what the machine allows |\n",
		hAll/1e6, hOne/1e6, hAll/hOne)
	fmt.Printf("| the same from each goroutine's CPU time: %d × (cost alone / cost with %d running) | %.1f ns alone, %.1f ns each with %d: %.2fx | >= 1.8x on 2 cores |\n",
		procs, procs, cost1, costN, procs, float64(procs)*cost1/costN)
}

func nodes(ids []string, w float64) []kolco.Node {
	out := make([]kolco.Node, len(ids))
	for i, id := range ids {
		out[i] = kolco.Node{ID: id, Weight: w}
	}
	return out
}
