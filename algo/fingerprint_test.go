package algo_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
)

// script builds a placement of the algorithm name over a pool of five
// nodes from data: each byte adds or removes one node (and, for weighted
// algorithms, may set its weight to 1, 2 or 4), skipping changes that
// would fail.
func script(t *testing.T, name string, data []byte) algo.Placement {
	t.Helper()
	pool := kolcotest.Nodes(5)
	p, err := algo.New(name, pool[:1], algo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range data {
		n := pool[int(b)%len(pool)]
		members := p.Nodes()
		present := slices.ContainsFunc(members, func(m kolco.Node) bool { return m.ID == n.ID })
		switch {
		case !present:
			err = p.Add(n)
		case b&0x80 != 0:
			err = p.Reweight(n.ID, float64(int(1)<<(b>>5&3)%8))
		case len(members) > 1:
			err = p.Remove(n.ID)
		}
		if err != nil && !errors.Is(err, kolco.ErrBadWeight) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return p
}

// FuzzFingerprint builds two placements of one algorithm from two
// histories and checks that their fingerprints are equal exactly when they
// place a sample of keys, and their replica lists, alike.
func FuzzFingerprint(f *testing.F) {
	f.Add(uint8(0), []byte{1, 2, 3}, []byte{3, 2, 1})       // same set, other order
	f.Add(uint8(3), []byte{1, 2, 1, 2}, []byte{})           // back to one node
	f.Add(uint8(4), []byte{1, 2, 3, 1}, []byte{2, 3})       // history-dependent: removal then re-add
	f.Add(uint8(8), []byte{1, 0x81}, []byte{1, 0xa1})       // weights
	f.Add(uint8(9), []byte{4, 3, 2, 1, 4}, []byte{1, 2, 3}) // a longer history
	names := algo.Names()
	keys := kolcotest.Keys(4000)
	f.Fuzz(func(t *testing.T, which uint8, a, b []byte) {
		name := names[int(which)%len(names)]
		p, q := script(t, name, a), script(t, name, b)
		fp, err := kolco.Fingerprint(p)
		if err != nil {
			t.Fatal(err)
		}
		fq, err := kolco.Fingerprint(q)
		if err != nil {
			t.Fatal(err)
		}
		if alike := sameSample(p, q, keys); alike != (fp == fq) {
			t.Fatalf("%s: fingerprints %s and %s; the sample placed alike: %v\n%v\n%v", name, fp, fq, alike, p.Nodes(), q.Nodes())
		}
	})
}

// sameSample reports whether p and q agree on the owner of every key and
// on the first keys' replica lists.
func sameSample(p, q kolco.Placement, keys []string) bool {
	var a, b []kolco.Node
	for i, k := range keys {
		n, _ := p.Locate(k)
		m, _ := q.Locate(k)
		if n.ID != m.ID {
			return false
		}
		if i < 300 {
			a, _ = p.LocateN(a[:0], k, 3)
			b, _ = q.LocateN(b[:0], k, 3)
			if !slices.EqualFunc(a, b, func(x, y kolco.Node) bool { return x.ID == y.ID }) {
				return false
			}
		}
	}
	return true
}

func TestFingerprintNeedsNamedHash(t *testing.T) {
	own := func(k string) uint64 { return keyhash.XXH3(k) }
	for _, name := range algo.Names() {
		p, err := algo.New(name, kolcotest.Nodes(3), algo.Options{Hash: own})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kolco.Fingerprint(p); !errors.Is(err, kolco.ErrBadConfig) {
			t.Errorf("%s with an unnamed hash: %v, want ErrBadConfig", name, err)
		}
	}
}
