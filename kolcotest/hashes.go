package kolcotest

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
)

// The hash matrix: every hash of package keyhash, over node names of
// several shapes, 11 nodes and 200,000 keys.
const (
	matrixNodes = 11
	matrixKeys  = 200_000
)

// NodeShapes returns the node name shapes the hash matrix uses, by name:
// "name-N", "host:port" on one port, "ip:port" on one address, and
// fully qualified host names, zero-padded and counted from 1 inside the
// name. Weak hashes treat each shape differently: fnv1a crowds names that
// differ in their last characters, crc32 is linear in them.
func NodeShapes() map[string]func(i int) string {
	return map[string]func(i int) string{
		"name-N":    func(i int) string { return fmt.Sprintf("node-%d", i) },
		"host:port": func(i int) string { return fmt.Sprintf("10.0.%d.7:11211", i) },
		"ip:port":   func(i int) string { return fmt.Sprintf("127.0.0.1:%d", 11211+i) },
		"fqdn":      func(i int) string { return fmt.Sprintf("memcached%02d.example.com", i) },
		// Under crc32 these eleven put two of multiprobe's points within
		// 0.0012 and 0.016 of a mean arc of others' (see multiprobe's
		// Balance).
		"fqdn-N": func(i int) string { return fmt.Sprintf("mc-eu-%d.prod.example.com", i+1) },
	}
}

var matrix struct {
	once sync.Once
	keys []string
}

// matrixKeySet returns the matrix's keys, built once for every algorithm
// and hash of a test binary.
func matrixKeySet() []string {
	matrix.once.Do(func() { matrix.keys = Keys(scaled(matrixKeys)) })
	return matrix.keys
}

// testHashBalance builds the algorithm with every hash over every node
// shape and checks the smallest and largest load against the algorithm's
// bounds, and, where the algorithm states each node's expected share,
// every node's load against it.
func testHashBalance(t *testing.T, a Algorithm) {
	if a.NewHashed == nil {
		t.Skip("the algorithm takes no key hash")
	}
	for _, name := range keyhash.Names() {
		hash, _ := keyhash.Parse(name)
		for shape, id := range NodeShapes() {
			t.Run(name+"/"+shape, func(t *testing.T) {
				t.Parallel()
				nodes := make([]kolco.Node, matrixNodes)
				for i := range nodes {
					nodes[i] = kolco.Node{ID: id(i)}
				}
				p, err := a.NewHashed(nodes, hash)
				if err != nil {
					t.Fatalf("%s with %s: %v", a.Name, name, err)
				}
				checkLoads(t, a, p, matrixKeySet())
			})
		}
	}
}

// checkLoads places keys with p (or a.Owners) and checks the loads.
func checkLoads(t *testing.T, a Algorithm, p kolco.Placement, keys []string) {
	t.Helper()
	load := make([]float64, len(p.Nodes()))
	if a.Owners != nil {
		owners, err := a.Owners(p, keys)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range owners {
			load[o]++
		}
	} else {
		l := p.(kolco.IndexLocator)
		for _, k := range keys {
			i, err := l.LocateIndex(k)
			if err != nil {
				t.Fatal(err)
			}
			load[i]++
		}
	}
	mean := float64(len(keys)) / float64(len(load))
	lo, hi := math.Inf(1), 0.0
	for _, l := range load {
		lo, hi = min(lo, l/mean), max(hi, l/mean)
	}
	t.Logf("%s: max/mean %.3f, min/mean %.3f (bounds %.2f, %.2f)", a.Name, hi, lo, a.MaxOverMean, a.MinOverMean)
	if hi > a.MaxOverMean || lo < a.MinOverMean {
		t.Errorf("%s: max/mean %.3f, min/mean %.3f: outside [%.2f, %.2f]", a.Name, hi, lo, a.MinOverMean, a.MaxOverMean)
	}
	if a.Shares == nil {
		return
	}
	shares := a.Shares(p)
	for i, n := range p.Nodes() {
		want := shares[n.ID] * float64(len(keys))
		if d := math.Abs(load[i] - want); d > 4.5*math.Sqrt(want)+1 {
			t.Errorf("%s: node %s holds %.0f keys, its expected share %.0f", a.Name, n.ID, load[i], want)
		}
	}
}
