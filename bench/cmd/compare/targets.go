package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/bench"
	"github.com/kolco-dev/kolco/ring"
)

// targets measures the ring's performance targets, each as a ratio of two
// figures measured in this run, and prints them as a table.
func targets(keys []string, d time.Duration, rounds int) error {
	fmt.Println("\n### Ring targets (ratios within this run)")
	fmt.Println()
	fmt.Println("| target | measured | goal |")
	fmt.Println("|---|---|---|")
	if err := lookupTargets(keys, d, rounds); err != nil {
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

func lookupTargets(keys []string, d time.Duration, rounds int) error {
	ids100 := bench.NodeIDs(100)
	small, err := ring.New(nodes(ids100, 1), ring.Config{VNodes: 160})
	if err != nil {
		return err
	}
	big, err := ring.New(nodes(bench.NodeIDs(1000), 1), ring.Config{VNodes: 1000})
	if err != nil {
		return err
	}
	// Controls: the memory floor at each ring's size (its points, owners
	// and index), 230 KB and 14 MB.
	fns := []func(string) string{locate(small), bench.HashAlone(), locate(big),
		bench.RandomReads(256<<10, 1), bench.RandomReads(256<<10, 2), bench.RandomReads(16<<20, 1), bench.RandomReads(16<<20, 2)}
	firstLib := len(fns)
	names := make([]string, firstLib)
	for _, l := range bench.Libs() {
		if !l.Ring || l.Kolco {
			continue
		}
		inst, err := l.New(ids100, 160)
		if err != nil {
			return err
		}
		fns, names = append(fns, inst.Lookup), append(names, l.Name)
	}
	best := interleaved(fns, keys, d, 2*rounds)
	fastest := firstLib
	for i := firstLib + 1; i < len(best); i++ {
		if best[i] < best[fastest] {
			fastest = i
		}
	}
	fmt.Printf("| lookup, 100 nodes × 160 points: kolco vs the fastest ring library at 100 × 160 (%s) | %.1f ns vs %.1f ns: %.1fx faster | >= 5x |\n",
		names[fastest], best[0], best[fastest], best[fastest]/best[0])
	fmt.Printf("| lookup, 100 × 160, vs hashing the key alone with the same hash (xxh3) | %.1f ns vs %.1f ns: %.2fx | <= 3x |\n",
		best[0], best[1], best[0]/best[1])
	fmt.Printf("| lookup, 1000 nodes × 1000 points (1M points) vs 100 × 160 | %.1f ns vs %.1f ns: %.2fx | <= 2x |\n",
		best[2], best[0], best[2]/best[0])
	fmt.Printf("| control: hash, then 1 or 2 dependent random reads in a 256 KB table (the size of 100 × 160) | 1: %.1f ns; 2: %.1f ns | what the machine allows |\n",
		best[3], best[4])
	fmt.Printf("| control: the same in a 16 MB table (the size of 1M points); 2 reads vs the whole 100 × 160 lookup | 1: %.1f ns; 2: %.1f ns: %.2fx | what the machine allows |\n",
		best[5], best[6], best[6]/best[0])
	return nil
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

	quiet, err := bench.LookupsDuringChanges(locate(r), keys, nil, time.Second)
	if err != nil {
		return err
	}
	busy, err := bench.LookupsDuringChanges(locate(r), keys, func(i int) error {
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
		one = max(one, bench.Throughput(locate(r), keys, 1, 500*time.Millisecond))
		all = max(all, bench.Throughput(locate(r), keys, procs, 500*time.Millisecond))
		c1 := bench.ParallelCost(locate(r), keys, 1, 200*time.Millisecond)
		cN := bench.ParallelCost(locate(r), keys, procs, 200*time.Millisecond)
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
		hOne = max(hOne, bench.Throughput(bench.HashAlone(), keys, 1, 300*time.Millisecond))
		hAll = max(hAll, bench.Throughput(bench.HashAlone(), keys, procs, 300*time.Millisecond))
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

func locate(r *ring.Ring) func(string) string {
	return func(key string) string {
		id, _ := r.LocateID(key)
		return id
	}
}
