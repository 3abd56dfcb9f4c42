package ring_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/ring"
)

var benchKeys = func() []string {
	keys := make([]string, 1<<16)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i*7919)
	}
	return keys
}()

func BenchmarkLocate(b *testing.B) {
	for _, nodes := range []int{10, 100, 1000} {
		for _, v := range []int{100, 160, 1000} {
			r := mustNew(b, named("node", nodes), ring.Config{VNodes: v})
			b.Run(fmt.Sprintf("nodes=%d/vnodes=%d", nodes, v), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					sinkNode, _ = r.Locate(benchKeys[i&(len(benchKeys)-1)])
					i++
				}
			})
		}
	}
}

// BenchmarkLocateID is BenchmarkLocate for the ID alone, at the sizes the
// bench module's targets use.
func BenchmarkLocateID(b *testing.B) {
	for _, size := range []struct{ nodes, v int }{{100, 160}, {1000, 1000}} {
		r := mustNew(b, named("node", size.nodes), ring.Config{VNodes: size.v})
		b.Run(fmt.Sprintf("nodes=%d/vnodes=%d", size.nodes, size.v), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				sinkID, _ = r.LocateID(benchKeys[i&(len(benchKeys)-1)])
				i++
			}
		})
	}
}

func BenchmarkLocateN(b *testing.B) {
	r := mustNew(b, named("node", 100), ring.Config{VNodes: 160})
	dst := make([]kolco.Node, 0, 3)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		dst, _ = r.LocateN(dst[:0], benchKeys[i&(len(benchKeys)-1)], 3)
		i++
	}
}

func BenchmarkLocateParallel(b *testing.B) {
	r := mustNew(b, named("node", 100), ring.Config{VNodes: 160})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		var n *kolco.Node
		for pb.Next() {
			n, _ = r.Locate(benchKeys[i&(len(benchKeys)-1)])
			i++
		}
		_ = n
	})
}

func BenchmarkBuild(b *testing.B) {
	for _, nodes := range []int{10, 100, 1000} {
		all := named("node", nodes)
		b.Run(fmt.Sprintf("nodes=%d/vnodes=100", nodes), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				mustNew(b, all, ring.Config{VNodes: 100})
			}
		})
	}
}

// BenchmarkAddOne adds one node of 1000 points to a 100k-point ring; compare
// with BenchmarkBuild/nodes=1000, which builds a ring of that size from scratch.
func BenchmarkAddOne(b *testing.B) {
	r := mustNew(b, named("node", 1000), ring.Config{VNodes: 100})
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Add(kolco.Node{ID: "new", Weight: 10}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := r.Remove("new"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkLocateDuringAdds looks keys up in a 100k-point ring while another
// goroutine adds and removes a node of 1000 points as fast as it can. A
// lookup never waits for a change, so ns/op stays near BenchmarkLocate's
// (nodes=1000/vnodes=100) apart from the core the writer takes; "changes"
// reports how many changes ran meanwhile. B/op counts the writer's
// allocations too; the lookups allocate nothing.
func BenchmarkLocateDuringAdds(b *testing.B) {
	r := mustNew(b, named("node", 1000), ring.Config{VNodes: 100})
	extra := kolco.Node{ID: "new", Weight: 10}
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		changes := 0
		for {
			select {
			case <-stop:
				done <- changes
				return
			default:
			}
			if err := r.Add(extra); err != nil {
				b.Error(err)
			}
			if err := r.Remove(extra.ID); err != nil {
				b.Error(err)
			}
			changes += 2
		}
	}()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		sinkNode, _ = r.Locate(benchKeys[i&(len(benchKeys)-1)])
		i++
	}
	close(stop)
	b.ReportMetric(float64(<-done), "changes")
}
