package kolcotest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kolco-dev/kolco"
)

// ConcurrentReaders checks that lookups of p from several goroutines agree
// with a sequential run and, under -race, that they share no mutable state.
// It is for immutable placements, such as other systems' pools, that Run's
// Mutable checks do not reach.
func ConcurrentReaders(t *testing.T, p kolco.Placement) {
	t.Helper()
	keys := Keys(500)
	want := make([]string, len(keys))
	for i, k := range keys {
		n, err := p.Locate(k)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = n.ID
	}
	var wg sync.WaitGroup
	bad := make(chan string, 4)
	for range 4 {
		wg.Go(func() {
			for i, k := range keys {
				if n, err := p.Locate(k); err != nil || n.ID != want[i] {
					bad <- k
					return
				}
			}
		})
	}
	wg.Wait()
	close(bad)
	for k := range bad {
		t.Errorf("concurrent Locate(%q) disagrees with the sequential run", k)
	}
}

// testConcurrent runs readers against a writer; run it under -race. The
// writer's changes are fixed, so every state it passes through is known in
// advance (a twin placement replays them): each answer a reader gets must
// be the key's owner in one of those states, or it saw half a change.
func testConcurrent(t *testing.T, a Algorithm) {
	total := maxNodes
	if a.MaxNodes > 0 {
		total = min(total, a.MaxNodes)
	}
	if total < 2 {
		t.Skip("needs room for two nodes")
	}
	pool, start := Nodes(total), max(1, total/3)
	keys := Keys(64)
	steps := writerSteps(pool, start)
	twin, m := mutable(t, a, pool[:start])
	valid := make([]map[string]bool, len(keys))
	for i := range valid {
		valid[i] = map[string]bool{}
	}
	record := func() {
		for i, id := range placement(t, twin, keys) {
			valid[i][id] = true
		}
	}
	record()
	for _, s := range steps {
		if err := s.do(m); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		record()
	}
	p, m := mutable(t, a, pool[:start])
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan string, 3)
	for r := range 3 {
		wg.Go(func() { readUntil(&stop, p, keys, valid, r, errs) })
	}
	for _, s := range steps {
		if err := s.do(m); err != nil {
			t.Errorf("%s: %v", s.name, err)
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// maxNodes bounds the node count of the writer's states.
const maxNodes = 24

// readUntil looks keys up until stop, reporting to errs the first answer
// that no whole state gives.
func readUntil(stop *atomic.Bool, p kolco.Placement, keys []string, valid []map[string]bool, r int, errs chan<- string) {
	idl, _ := p.(kolco.IDLocator)
	ixl, _ := p.(kolco.IndexLocator)
	dst := make([]kolco.Node, 0, 3)
	for i := 0; i < 1_000_000 && !stop.Load(); i++ {
		j := (i + r) % len(keys)
		k := keys[j]
		n, err := p.Locate(k)
		if err != nil || !valid[j][n.ID] {
			errs <- fmt.Sprintf("Locate(%q) during changes = %q, %v: no whole state places it there", k, n.ID, err)
			return
		}
		if idl != nil {
			if id, err := idl.LocateID(k); err != nil || !valid[j][id] {
				errs <- fmt.Sprintf("LocateID(%q) during changes = %q, %v", k, id, err)
				return
			}
		}
		if ixl != nil {
			if x, err := ixl.LocateIndex(k); err != nil || x < 0 || x >= maxNodes {
				errs <- fmt.Sprintf("LocateIndex(%q) during changes = %d, %v", k, x, err)
				return
			}
		}
		dst, err = p.LocateN(dst[:0], k, 3)
		if err != nil || len(dst) == 0 || !valid[j][dst[0].ID] || (len(dst) > 1 && dst[0].ID == dst[1].ID) {
			errs <- fmt.Sprintf("LocateN(%q, 3) during changes = %v, %v", k, ids(dst), err)
			return
		}
	}
}

// step is one change of the writer, through one of the Mutable methods.
type step struct {
	name string
	do   func(kolco.Mutable) error
}

// writerSteps returns a fixed sequence of changes that never empties the
// set: pool[:start] are members, the others come and go, through Add,
// Reweight (to 1, which every algorithm takes), Remove and Apply.
func writerSteps(pool []kolco.Node, start int) []step {
	var steps []step
	for i := range 120 {
		n := pool[start+i%(len(pool)-start)]
		old := pool[i%start]
		steps = append(steps,
			step{"Add " + n.ID, func(m kolco.Mutable) error { return m.Add(n) }},
			step{"Reweight " + n.ID, func(m kolco.Mutable) error { return m.Reweight(n.ID, 1) }})
		if i%3 == 0 {
			moved := old
			moved.Addr = fmt.Sprintf("moved-%d", i)
			steps = append(steps,
				step{"Remove " + old.ID, func(m kolco.Mutable) error { return m.Remove(old.ID) }},
				step{"Apply re-add " + old.ID, func(m kolco.Mutable) error {
					return m.Apply(kolco.Change{Add: []kolco.Node{old}, Update: []kolco.Node{moved}})
				}})
		}
		steps = append(steps, step{"Remove " + n.ID, func(m kolco.Mutable) error { return m.Remove(n.ID) }})
	}
	return steps
}
