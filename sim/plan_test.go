package sim

import (
	"errors"
	"math"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/keys"
)

// TestPlanArticleCost: the seed article's examples, 10 -> 11 nodes. With
// the theory's moved share the model gives its figures: 91 364 database
// RPS (18.3x) for hash % N and 13 636 (2.7x) for a ring, out of 100 000 RPS
// at 95% hits; 2.73 TB and 273 GB (27.3 GB per old node) of 3 TB. The
// measured figures on a 100k-key sample agree within the sampling noise
// for modulo (5 binomial standard deviations of the moved share).
func TestPlanArticleCost(t *testing.T) {
	const k = 100_000
	ten := nodeNames("node", 10)
	for _, c := range []struct {
		algo           string
		db, factor     float64
		bytes, perNode float64
	}{
		{"modulo", 91363.64, 18.27, 2.7273e12, 272.7e9},
		{"ring", 13636.36, 2.727, 272.73e9, 27.27e9},
	} {
		res, err := Plan(PlanConfig{Setup: setup(c.algo, 160), Before: ten, Add: []kolco.Node{{ID: "node-10"}},
			Keys: keys.Synthetic(k), RPS: 100_000, HitRate: 0.95, Data: 3e12})
		if err != nil {
			t.Fatal(err)
		}
		cc := res.Cache
		if math.Abs(cc.TheoryDB-c.db) > 0.01 || math.Abs(cc.TheoryFac-c.factor) > 0.005 || math.Abs(cc.SteadyDB-5000) > 1e-6 {
			t.Errorf("%s: theory database %.2f RPS (%.3fx), want %.2f (%.3fx)", c.algo, cc.TheoryDB, cc.TheoryFac, c.db, c.factor)
		}
		theoryBytes := res.TheoryShare * res.TotalBytes
		if math.Abs(theoryBytes/c.bytes-1) > 1e-4 || math.Abs(theoryBytes/10/c.perNode-1) > 1e-3 {
			t.Errorf("%s: theory moves %.4g bytes (%.4g per old node), want %.4g (%.4g)", c.algo, theoryBytes, theoryBytes/10, c.bytes, c.perNode)
		}
		if math.Abs(res.TotalBytes-3e12) > 1 {
			t.Errorf("%s: total %v bytes, want 3 TB", c.algo, res.TotalBytes)
		}
		if c.algo == "modulo" {
			sd := binomialSD(10.0/11, k)
			if math.Abs(res.MovedShare-10.0/11) > 5*sd || math.Abs(cc.DB-c.db) > 5*sd*100_000*0.95 {
				t.Errorf("modulo measured: moved %.4f, database %.0f RPS", res.MovedShare, cc.DB)
			}
		}
		// Bytes sent add up to bytes received and to the moved bytes.
		var sent, recv float64
		for _, l := range res.Loads {
			sent += l.Sends
			recv += l.Receives
		}
		if math.Abs(sent-res.MovedBytes) > 1 || math.Abs(recv-res.MovedBytes) > 1 {
			t.Errorf("%s: sent %v, received %v, moved %v", c.algo, sent, recv, res.MovedBytes)
		}
	}
}

// TestPlanFlowsAndRates: on a ring, adding a node moves keys only onto it;
// request rates weight the cold share.
func TestPlanFlowsAndRates(t *testing.T) {
	ks := keys.Synthetic(5000)
	ks.Rates = make([]float64, ks.Len())
	ks.Rates[0] = 1 // only key:0 is ever requested
	res, err := Plan(PlanConfig{Setup: setup("ring", 50), Before: nodeNames("n", 4), Add: []kolco.Node{{ID: "new"}},
		Keys: ks, RPS: 1000, HitRate: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	for _, fl := range res.Flows {
		if fl.To != "new" {
			t.Errorf("flow %s -> %s on a ring add", fl.From, fl.To)
		}
	}
	moved0 := false
	for _, fl := range res.Flows {
		moved0 = moved0 || fl.Requests > 0
	}
	want := 100.0 // key:0 stays: the steady 10% misses
	if moved0 {
		want = 1000
	}
	if math.Abs(res.Cache.DB-want) > 1e-9 {
		t.Errorf("database %v RPS, want %v (key:0 moved: %v)", res.Cache.DB, want, moved0)
	}
	if _, err := Plan(PlanConfig{Setup: setup("ring", 50), Before: nodeNames("n", 4), Remove: []string{"x"}, Keys: ks}); !errors.Is(err, kolco.ErrUnknownNode) {
		t.Errorf("removing an unknown node: %v", err)
	}
	if _, err := Plan(PlanConfig{Setup: setup("ring", 50), Before: nodeNames("n", 4), HitRate: 2, Keys: ks}); !errors.Is(err, kolco.ErrBadConfig) {
		t.Errorf("hit rate 2: %v", err)
	}
}
