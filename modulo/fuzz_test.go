package modulo_test

import (
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/modulo"
)

// FuzzOps runs arbitrary membership changes and lookups, including the
// degenerate sets (empty, all removed, n > nodes), checking that nothing
// panics and every error is a sentinel.
func FuzzOps(f *testing.F) {
	kolcotest.FuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		kolcotest.Ops(t, kolcotest.Algorithm{
			Name: "modulo",
			New:  func(nodes []kolco.Node) (kolco.Placement, error) { return modulo.New(nodes, modulo.Config{}) },
		}, data)
	})
}
