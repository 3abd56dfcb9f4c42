package kolcotest

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
)

// balanceSizes returns the node counts of the balance check and the keys
// per node used at each.
func balanceSizes() []struct{ nodes, perNode int } {
	return []struct{ nodes, perNode int }{{10, 2000}, {100, 200}, {1000, 50}}
}

func testBalance(t *testing.T, a Algorithm) {
	if a.Balance == nil {
		t.Skip("no documented bound")
	}
	for _, s := range balanceSizes() {
		if a.MaxNodes > 0 && s.nodes > a.MaxNodes {
			t.Logf("%d nodes: above MaxNodes %d, skipped", s.nodes, a.MaxNodes)
			continue
		}
		if raceEnabled && s.nodes > 100 {
			t.Logf("%d nodes: skipped under -race (checked by the normal run)", s.nodes)
			continue
		}
		p := build(t, a, Nodes(s.nodes))
		load := map[string]int{}
		keys := Keys(s.nodes * s.perNode)
		for _, id := range placement(t, p, keys) {
			load[id]++
		}
		lo, hi := math.MaxInt, 0
		for _, n := range p.Nodes() {
			lo, hi = min(lo, load[n.ID]), max(hi, load[n.ID])
		}
		avg := float64(len(keys)) / float64(s.nodes)
		bound := a.Balance(s.nodes) * SamplingAllowance(s.nodes, avg)
		t.Logf("%s: %d nodes, %d keys: max/avg %.3f, min/avg %.3f (bound %.3f)",
			a.Name, s.nodes, len(keys), float64(hi)/avg, float64(lo)/avg, bound)
		if float64(hi)/avg > bound {
			t.Errorf("%d nodes: max/avg load %.3f exceeds %.3f", s.nodes, float64(hi)/avg, bound)
		}
	}
}

// weightedNodes returns nodes with integer weights 1..4 and a zero weight
// (read as 1), so that weights by repetition can honour them exactly.
func weightedNodes() []kolco.Node {
	ws := []float64{1, 2, 3, 4, 0, 2, 1, 3}
	nodes := Nodes(len(ws))
	for i := range nodes {
		nodes[i].Weight = ws[i]
	}
	return nodes
}

func testWeights(t *testing.T, a Algorithm) {
	nodes := weightedNodes()
	p, err := a.New(nodes)
	if !a.Weighted {
		checkUnweighted(t, a, nodes, p, err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	keys := Keys(scaled(60000))
	checkShares(t, a, nodes, placement(t, p, keys))
	m, ok := p.(kolco.Mutable)
	if !ok {
		return
	}
	// Reweight moves the shares and, for an order-independent algorithm,
	// gives the same placement as a fresh build with the new weight.
	if err := m.Reweight(nodes[0].ID, 5); err != nil {
		t.Fatal(err)
	}
	nodes[0].Weight = 5
	got := placement(t, p, keys)
	checkShares(t, a, nodes, got)
	if a.OrderIndependent {
		equalPlacement(t, "after Reweight", placement(t, build(t, a, nodes), keys), got, keys)
	}
}

func checkShares(t *testing.T, a Algorithm, nodes []kolco.Node, owners []string) {
	t.Helper()
	total := 0.0
	for _, n := range nodes {
		total += n.EffectiveWeight()
	}
	load := map[string]int{}
	for _, id := range owners {
		load[id]++
	}
	worst := 0.0
	defer func() {
		t.Logf("%s: worst relative share error %.2f%% over %d weighted nodes", a.Name, 100*worst, len(nodes))
	}()
	for _, n := range nodes {
		want := float64(len(owners)) * n.EffectiveWeight() / total
		// Three standard deviations of the binomial count on top of the
		// algorithm's tolerance.
		tol := a.WeightTolerance + 3/math.Sqrt(want)
		got := float64(load[n.ID])
		worst = max(worst, math.Abs(got/want-1))
		if math.Abs(got/want-1) > tol {
			t.Errorf("node %s weight %v gets %.0f keys, want %.0f ± %.1f%%", n.ID, n.EffectiveWeight(), got, want, 100*tol)
		}
	}
}

// checkUnweighted accepts an algorithm that ignores weights (same placement
// as with all weights 1) or rejects them with ErrBadWeight.
func checkUnweighted(t *testing.T, a Algorithm, nodes []kolco.Node, p kolco.Placement, err error) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, kolco.ErrBadWeight) {
			t.Fatalf("unweighted New with weights: error %v does not wrap ErrBadWeight", err)
		}
		t.Logf("%s rejects weights other than 1: %v", a.Name, err)
		unit := slices.Clone(nodes)
		unit[0].Weight, unit[1].Weight = 1, 0
		build(t, a, unit[:2])
		return
	}
	unit := slices.Clone(nodes)
	for i := range unit {
		unit[i].Weight = 0
	}
	keys := Keys(5000)
	equalPlacement(t, "unweighted algorithm with weights", placement(t, build(t, a, unit), keys), placement(t, p, keys), keys)
	t.Logf("%s ignores weights", a.Name)
}
