package algo_test

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
)

var sinkNode *kolco.Node

// largeSizes are the node counts, beyond those of every algorithm, at
// which the constant-time hashes and their neighbours run: every bucket
// or slot of the placement is then far outside the caches.
var largeSizes = map[string]bool{
	"jump": true, "jumpback": true, "flip": true, "binomial": true, "power": true,
	"anchor": true, "dx": true, "maglev": true, "jumpbackanchor": true,
}

// bigTable is the largest prime table maglev takes (2^24-3): above 1000
// nodes its default of 65537 entries leaves nodes without an entry, and
// this one gives 168 entries a node at 100,000 nodes and 17 at a million,
// below the paper's advice of 100.
const bigTable = 16777213

// BenchmarkLocate compares every algorithm in one run, so that the ratios
// hold even on a busy machine, at 10 to 10,000 nodes, and the
// constant-time hashes with jump, anchor and maglev also at 100,000 and a
// million: go test -run '^$' -bench Locate ./algo/. Besides wall time it
// reports cpu-ns/op on Linux, the benchmark thread's CPU time per lookup
// (the build before b.Loop's first call is not counted: Loop resets the
// timer, and the clock starts after the build).
func BenchmarkLocate(b *testing.B) {
	keys := make([]string, 1<<14)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i*7919)
	}
	for _, a := range algo.All() {
		for _, n := range []int{10, 100, 1000, 10000, 100_000, 1_000_000} {
			if n > 10000 && !largeSizes[a.Name] {
				continue
			}
			b.Run(fmt.Sprintf("%s/nodes=%d", a.Name, n), func(b *testing.B) {
				nodes := make([]kolco.Node, n)
				for i := range nodes {
					nodes[i] = kolco.Node{ID: "node-" + strconv.Itoa(i)}
				}
				var opts algo.Options
				if a.Name == "maglev" && n > 1000 {
					opts.TableSize = bigTable
				}
				p, err := algo.New(a.Name, nodes, opts)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				start := threadCPU()
				i := 0
				for b.Loop() {
					sinkNode, _ = p.Locate(keys[i&(len(keys)-1)])
					i++
				}
				if cpu := threadCPU() - start; cpu > 0 {
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}
