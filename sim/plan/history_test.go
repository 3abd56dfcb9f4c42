package plan_test

import (
	"errors"
	"math"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/plan"
)

// build returns algorithm name over nodes, failing the test on error.
func build(t *testing.T, name string, nodes []kolco.Node) algo.Placement {
	t.Helper()
	p, err := algo.New(name, nodes, algo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestListMovesIsEveryMovedKey: the per-key list holds exactly the keys
// whose owner differs, each from its owner before to its owner after.
func TestListMovesIsEveryMovedKey(t *testing.T) {
	ks := keys.Synthetic(4000)
	before, after := build(t, "rendezvous", kolcotest.Nodes(4)), build(t, "maglev", kolcotest.Nodes(5))
	res, err := plan.Compute(plan.Config{Before: before, After: after, Keys: ks, ListMoves: true})
	if err != nil {
		t.Fatal(err)
	}
	var want []plan.Move
	for i := range ks.Len() {
		b, _ := before.Locate(ks.Key(i))
		a, _ := after.Locate(ks.Key(i))
		if a.ID != b.ID {
			want = append(want, plan.Move{Key: ks.Key(i), From: b.ID, To: a.ID})
		}
	}
	if len(res.Moves) != len(want) || len(want) != res.Moved {
		t.Fatalf("%d moves listed, %d counted, %d by Locate", len(res.Moves), res.Moved, len(want))
	}
	for i := range want {
		if res.Moves[i] != want[i] {
			t.Fatalf("move %d = %+v, want %+v", i, res.Moves[i], want[i])
		}
	}
	if res, _ := plan.Compute(plan.Config{Before: before, After: after, Keys: ks}); res.Moves != nil {
		t.Errorf("%d moves listed without ListMoves", len(res.Moves))
	}
}

// TestHistoryReturnsAreStaleCopies: a node added and then removed again
// (a canary rolled back) sends every key it took back to the node that
// held it before: every move of the second step returns. A history of
// three different placements is checked key by key against Locate.
func TestHistoryReturnsAreStaleCopies(t *testing.T) {
	ks := keys.Synthetic(5000)
	three, four := kolcotest.Nodes(3), kolcotest.Nodes(4)
	h, err := plan.ComputeHistory(plan.Config{Keys: ks, ListMoves: true},
		[]kolco.Placement{build(t, "ring", three), build(t, "ring", four), build(t, "ring", three)})
	if err != nil {
		t.Fatal(err)
	}
	add, remove := h.Steps[0], h.Steps[1]
	if add.Step != 1 || remove.Step != 2 || add.Returned != 0 || remove.Moved != add.Moved || remove.Returned != remove.Moved {
		t.Errorf("add: step %d, %d moved, %d returned; remove: step %d, %d moved, %d returned; want every key back",
			add.Step, add.Moved, add.Returned, remove.Step, remove.Moved, remove.Returned)
	}

	hist := []kolco.Placement{build(t, "jump", three), build(t, "rendezvous", four), build(t, "maglev", three), build(t, "ring", four)}
	h, err = plan.ComputeHistory(plan.Config{Keys: ks, ListMoves: true}, hist)
	if err != nil {
		t.Fatal(err)
	}
	for s, res := range h.Steps {
		returned, m := 0, 0
		for i := range ks.Len() {
			var owners []string
			for _, p := range hist[:s+2] {
				n, _ := p.Locate(ks.Key(i))
				owners = append(owners, n.ID)
			}
			to := owners[s+1]
			if to == owners[s] {
				continue
			}
			back := false
			for _, o := range owners[:s] {
				back = back || o == to
			}
			if back {
				returned++
			}
			if mv := res.Moves[m]; mv.Key != ks.Key(i) || mv.Returns != back {
				t.Fatalf("step %d: move %+v, want key %s returning %v", s+1, mv, ks.Key(i), back)
			}
			m++
		}
		if res.Returned != returned || m != res.Moved {
			t.Errorf("step %d: %d returned of %d moved; Locate finds %d of %d", s+1, res.Returned, res.Moved, returned, m)
		}
	}
}

// TestWarmModel: with every previous owner answering, a warm change costs
// the database nothing over steady and every request to a moved key reads
// the previous owner; with the removed node down, its keys miss as if
// cold, and the theory is its share of the weight.
func TestWarmModel(t *testing.T) {
	ks := keys.Synthetic(20000)
	four, five := kolcotest.Nodes(4), kolcotest.Nodes(5)
	cfg := plan.Config{Keys: ks, RPS: 10000, HitRate: 0.9, Warm: true}

	cfg.Before, cfg.After = build(t, "ring", four), build(t, "ring", five)
	add, err := plan.Compute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := add.Cache.Warm
	if math.Abs(w.DB-add.Cache.SteadyDB) > 1e-9 || w.Cold != 0 || math.Abs(w.Fallback-add.MovedRequests) > 1e-12 || w.TheoryFac != 1 {
		t.Errorf("add warm: %+v; want the steady %v RPS, every moved request a fallback (%v)", *w, add.Cache.SteadyDB, add.MovedRequests)
	}

	gone := five[4].ID
	cfg.Before, cfg.After, cfg.Down = build(t, "ring", five), build(t, "ring", four), []string{gone}
	remove, err := plan.Compute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w = remove.Cache.Warm
	if math.Abs(w.DB-remove.Cache.DB) > 1e-9 || w.Fallback != 0 || math.Abs(w.TheoryDB-plan.DatabaseLoad(10000, 0.9, 0.2)) > 1e-9 {
		t.Errorf("removal of a down node warm: %+v; want the cold %v RPS, theory %v", *w, remove.Cache.DB, plan.DatabaseLoad(10000, 0.9, 0.2))
	}
	cfg.Down = []string{"nowhere"}
	if _, err := plan.Compute(cfg); !errors.Is(err, kolco.ErrBadConfig) {
		t.Errorf("an unknown down node: %v, want ErrBadConfig", err)
	}
}

func TestComputeHistoryRefuses(t *testing.T) {
	p := build(t, "ring", kolcotest.Nodes(3))
	ks := keys.Synthetic(10)
	for _, c := range []struct {
		name string
		cfg  plan.Config
		hist []kolco.Placement
	}{
		{"one placement", plan.Config{Keys: ks}, []kolco.Placement{p}},
		{"Before set", plan.Config{Keys: ks, Before: p}, []kolco.Placement{p, p}},
		{"no keys", plan.Config{}, []kolco.Placement{p, p}},
		{"empty sample", plan.Config{Keys: keys.List(nil)}, []kolco.Placement{p, p}},
		{"unknown down node", plan.Config{Keys: ks, Down: []string{"x"}}, []kolco.Placement{p, p}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := plan.ComputeHistory(c.cfg, c.hist); !errors.Is(err, kolco.ErrBadConfig) {
				t.Errorf("%v, want ErrBadConfig", err)
			}
		})
	}
}
