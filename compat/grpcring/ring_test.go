package grpcring_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/grpcring"
)

func TestNewErrors(t *testing.T) {
	two := []grpcring.Endpoint{{Addr: "a:1"}, {Addr: "b:1"}}
	for _, c := range []struct {
		name      string
		endpoints []grpcring.Endpoint
		cfg       grpcring.Config
		want      error
	}{
		{"no endpoints", nil, grpcring.Config{}, kolco.ErrNoNodes},
		{"one hash key twice", []grpcring.Endpoint{{Addr: "a:1", HashKey: "k"}, {Addr: "b:1", HashKey: "k"}}, grpcring.Config{}, kolco.ErrDuplicateNode},
		{"key equal to another's address", []grpcring.Endpoint{{Addr: "a:1"}, {Addr: "b:1", HashKey: "a:1"}}, grpcring.Config{}, kolco.ErrDuplicateNode},
		{"no key and no address", []grpcring.Endpoint{{}}, grpcring.Config{}, kolco.ErrBadNodeID},
		{"weights above 2^32-1", []grpcring.Endpoint{{Addr: "a:1", Weight: math.MaxUint32}, {Addr: "b:1", Weight: 1}}, grpcring.Config{}, kolco.ErrBadWeight},
		{"min above 8M", two, grpcring.Config{MinRingSize: grpcring.MaxRingSize + 1}, kolco.ErrBadConfig},
		{"max above 8M", two, grpcring.Config{MaxRingSize: grpcring.MaxRingSize + 1}, kolco.ErrBadConfig},
		{"min above max", two, grpcring.Config{MinRingSize: 100, MaxRingSize: 10}, kolco.ErrBadConfig},
		{"min above the default max", two, grpcring.Config{MinRingSize: 5000}, kolco.ErrBadConfig},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := grpcring.New(c.endpoints, c.cfg); !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
		})
	}
}

// TestRingSize checks the number of entries against the sizing rule:
// scale = min(ceil(minWeight*min)/minWeight, max), capped.
func TestRingSize(t *testing.T) {
	for _, c := range []struct {
		weights []uint32
		cfg     grpcring.Config
		want    int
	}{
		{[]uint32{1, 1, 1}, grpcring.Config{}, 1026},                                        // ceil(1024/3)*3: whole entries for the least weight
		{[]uint32{3, 3, 4}, grpcring.Config{MinRingSize: 7, MaxRingSize: 100}, 10},          // the doc's example: weights {3,3,4}, 7 -> 10
		{[]uint32{1, 1000}, grpcring.Config{}, 2002},                                        // ceil(1024/1001)*1001
		{[]uint32{1, 5000}, grpcring.Config{}, 4096},                                        // ceil(1024/5001)*5001 is above max
		{[]uint32{1, 1}, grpcring.Config{MinRingSize: 8 << 20, MaxRingSize: 8 << 20}, 4096}, // capped
		{[]uint32{1, 1}, grpcring.Config{MinRingSize: 8 << 20, MaxRingSize: 8 << 20, Cap: 10000}, 10000},
		{[]uint32{2, 1}, grpcring.Config{MinRingSize: 1, MaxRingSize: 1}, 1},
	} {
		t.Run(fmt.Sprint(c.weights, c.cfg), func(t *testing.T) {
			var eps []grpcring.Endpoint
			for i, w := range c.weights {
				eps = append(eps, grpcring.Endpoint{Addr: fmt.Sprintf("10.0.0.%d:80", i), Weight: w})
			}
			r, err := grpcring.New(eps, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if r.Size() != c.want {
				t.Fatalf("%d entries, want %d", r.Size(), c.want)
			}
		})
	}
}

// TestLocate checks Locate, LocateIndex and LocateN against each other
// and the request hash of one header value against XXH64.
func TestLocate(t *testing.T) {
	eps := []grpcring.Endpoint{{Addr: "10.0.0.3:80"}, {Addr: "10.0.0.1:80", HashKey: "zeta", Weight: 3}, {Addr: "10.0.0.2:80"}}
	r, err := grpcring.New(eps, grpcring.Config{})
	if err != nil {
		t.Fatal(err)
	}
	nodes := r.Nodes()
	if nodes[2].ID != "zeta" || nodes[2].Addr != "10.0.0.1:80" || nodes[2].Weight != 3 {
		t.Fatalf("nodes %v: want the endpoints by hash key", nodes)
	}
	seen := map[string]bool{}
	for i := range 1000 {
		key := fmt.Sprint("k", i)
		n, _ := r.Locate(key)
		j, _ := r.LocateIndex(key)
		all, err := r.LocateN(nil, key, 5)
		if err != nil || nodes[j] != *n || len(all) != 3 || all[0] != *n || all[1] == all[2] || all[0] == all[1] {
			t.Fatalf("%q: Locate %v, index %d, LocateN %v %v", key, n, j, all, err)
		}
		if r.IndexHash(grpcring.RequestHash(key)) != j || grpcring.RequestHash(key) != xxhash.Sum64String(key) {
			t.Fatalf("%q: the request hash of one value is not XXH64 of it", key)
		}
		seen[n.ID] = true
	}
	if len(seen) != 3 {
		t.Fatalf("1000 keys reach %d endpoints", len(seen))
	}
	if grpcring.RequestHash("a", "b") != xxhash.Sum64String("a,b") {
		t.Fatal("values are not joined by a comma")
	}
}
