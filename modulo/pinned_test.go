package modulo_test

import (
	"testing"

	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/modulo"
)

// TestPinned pins the placement of 1000 keys on 10 nodes. The value is the
// package's own output, recorded when the package was written: it changes
// only if placement changes, which breaks every deployed cluster.
func TestPinned(t *testing.T) {
	p, err := modulo.New(kolcotest.Nodes(10), modulo.Config{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := kolcotest.Fingerprint(p, 1000)
	if err != nil {
		t.Fatal(err)
	}
	const want = 0xdfcb49f83f392c81
	if got != want {
		t.Errorf("fingerprint %#x, pinned %#x", got, uint64(want))
	}
}
