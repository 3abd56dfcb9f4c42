package algo_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
)

var sinkNode *kolco.Node

// BenchmarkLocate compares every algorithm in one run, so that the ratios
// hold even on a busy machine: go test -run '^$' -bench Locate ./algo/
func BenchmarkLocate(b *testing.B) {
	keys := make([]string, 1<<14)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i*7919)
	}
	for _, a := range algo.All() {
		for _, n := range []int{10, 100, 1000, 10000} {
			nodes := make([]kolco.Node, n)
			for i := range nodes {
				nodes[i] = kolco.Node{ID: "node-" + strconv.Itoa(i)}
			}
			p, err := algo.New(a.Name, nodes, algo.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/nodes=%d", a.Name, n), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					sinkNode, _ = p.Locate(keys[i&(len(keys)-1)])
					i++
				}
			})
		}
	}
}
