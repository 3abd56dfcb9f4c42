package modulo_test

import (
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/modulo"
)

func BenchmarkModulo(b *testing.B) {
	kolcotest.Benchmark(b, kolcotest.Algorithm{
		Name: "modulo",
		New:  func(nodes []kolco.Node) (kolco.Placement, error) { return modulo.New(nodes, modulo.Config{}) },
	})
}
