package kolcotest

import (
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"github.com/kolco-dev/kolco"
)

// signature digests where p places keys: every owner and the replica lists
// of the first keys.
func signature(t *testing.T, p kolco.Placement, keys []string) uint64 {
	t.Helper()
	h := fnv.New64a()
	var dst []kolco.Node
	for i, k := range keys {
		n, err := p.Locate(k)
		if err != nil {
			t.Fatal(err)
		}
		h.Write([]byte(n.ID + "\x00"))
		if i < 500 {
			dst, _ = p.LocateN(dst[:0], k, 3)
			for _, d := range dst {
				h.Write([]byte(d.ID + "\x01"))
			}
		}
	}
	return h.Sum64()
}

func fingerprint(t *testing.T, p kolco.Placement) string {
	t.Helper()
	fp, err := kolco.Fingerprint(p)
	if err != nil {
		t.Fatalf("Fingerprint: %v", err)
	}
	return fp
}

func testFingerprint(t *testing.T, a Algorithm) {
	p, m := mutable(t, a, Nodes(5))
	if _, ok := p.(kolco.Identity); !ok {
		t.Skip("placement has no identity")
	}
	before := fingerprint(t, p)
	moved := Nodes(5)[2]
	moved.Addr = "elsewhere"
	if err := m.Apply(kolco.Change{Update: []kolco.Node{moved}}); err != nil {
		t.Fatal(err)
	}
	if after := fingerprint(t, p); after != before {
		t.Errorf("a new address changed the fingerprint: %s -> %s", before, after)
	}
	// Placements built by many short random histories over a small pool,
	// so that many of them end alike and many not: each pair must have
	// equal fingerprints exactly when it places the sample alike.
	keys := Keys(scaled(20000))
	r := rand.New(rand.NewPCG(11, 12))
	type built struct {
		fp  string
		sig uint64
	}
	var all []built
	for range 24 {
		q, m := mutable(t, a, Nodes(5)[:2])
		for _, c := range history(r, Nodes(5), 2, r.IntN(8), a.Weighted) {
			if err := m.Apply(c); err != nil {
				t.Fatalf("Apply(%+v): %v", c, err)
			}
		}
		all = append(all, built{fingerprint(t, q), signature(t, q, keys)})
	}
	equal := 0
	for i := range all {
		for j := range i {
			if (all[i].fp == all[j].fp) != (all[i].sig == all[j].sig) {
				t.Errorf("placements %d and %d: fingerprints equal %v, placements equal %v", i, j,
					all[i].fp == all[j].fp, all[i].sig == all[j].sig)
			}
			if all[i].fp == all[j].fp {
				equal++
			}
		}
	}
	t.Logf("%s: %d of %d pairs alike", a.Name, equal, len(all)*(len(all)-1)/2)
}
