package rendezvous_test

import (
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/rendezvous"
)

func BenchmarkRendezvous(b *testing.B) {
	kolcotest.Benchmark(b, kolcotest.Algorithm{
		Name: "rendezvous",
		New:  func(nodes []kolco.Node) (kolco.Placement, error) { return rendezvous.New(nodes, rendezvous.Config{}) },
	})
}

// BenchmarkRendezvousWeighted pays one logarithm per node per lookup.
func BenchmarkRendezvousWeighted(b *testing.B) {
	kolcotest.Benchmark(b, kolcotest.Algorithm{
		Name: "rendezvous/weighted",
		New: func(nodes []kolco.Node) (kolco.Placement, error) {
			nodes = slices.Clone(nodes)
			nodes[0].Weight = 2
			return rendezvous.New(nodes, rendezvous.Config{})
		},
	})
}

// BenchmarkRendezvousArticle is the article's MD5 of ID + ":" + key.
func BenchmarkRendezvousArticle(b *testing.B) {
	kolcotest.Benchmark(b, kolcotest.Algorithm{
		Name: "rendezvous/md5",
		New: func(nodes []kolco.Node) (kolco.Placement, error) {
			return rendezvous.New(nodes, rendezvous.Config{Hash: keyhash.MD5, Separator: ":"})
		},
		MaxNodes: 1000,
	})
}
