package memento_test

import (
	"errors"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/memento"
)

// linear stands in for a bucket function. Key mod buckets is not
// consistent, but these tests only look at the bucket bookkeeping and at
// lookups landing on members.
func linear(key uint64, buckets int) int { return int(key % uint64(buckets)) }

func TestBucketsLIFO(t *testing.T) {
	p, err := memento.New(memento.Spec{Name: "test", Bucket: linear}, []kolco.Node{{ID: "a"}, {ID: "b"}, {ID: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	check := func(total, working int) {
		t.Helper()
		if gt, gw := p.Buckets(); gt != total || gw != working {
			t.Fatalf("Buckets() = %d, %d; want %d, %d", gt, gw, total, working)
		}
	}
	check(3, 3)
	_ = p.Remove("a", "c") // buckets 0 and 2 removed, 2 last
	check(3, 1)
	_ = p.Add(kolco.Node{ID: "x"}) // takes bucket 2
	_ = p.Add(kolco.Node{ID: "y"}) // takes bucket 0
	check(3, 3)
	_ = p.Add(kolco.Node{ID: "z"}) // none removed: a new bucket 3
	check(4, 4)
	if err := p.Remove("b", "x", "y", "z"); err != nil {
		t.Fatal(err)
	}
	check(4, 0)
	if _, err := p.Locate("k"); !errors.Is(err, kolco.ErrNoNodes) {
		t.Fatalf("Locate with no nodes: %v", err)
	}
	_ = p.Add(kolco.Node{ID: "w"})
	check(4, 1)
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		if n, err := p.Locate(k); err != nil || n.ID != "w" {
			t.Fatalf("Locate(%q) = %v, %v; want w", k, n.ID, err)
		}
	}
}
