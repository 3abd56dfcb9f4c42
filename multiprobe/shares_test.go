package multiprobe_test

import (
	"math"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/multiprobe"
)

// TestSharesPredictLoads checks the expected shares against 200,000 keys,
// and that they sum to one.
func TestSharesPredictLoads(t *testing.T) {
	for _, probes := range []int{1, 3, 21} {
		m, err := multiprobe.New(kolcotest.Nodes(11), multiprobe.Config{Probes: probes})
		if err != nil {
			t.Fatal(err)
		}
		shares := m.Shares()
		total := 0.0
		for _, s := range shares {
			total += s
		}
		if math.Abs(total-1) > 1e-9 {
			t.Errorf("probes %d: shares sum to %v", probes, total)
		}
		keys := kolcotest.Keys(200000)
		load := map[string]float64{}
		for _, k := range keys {
			n, _ := m.Locate(k)
			load[n.ID]++
		}
		for id, s := range shares {
			want := s * float64(len(keys))
			if d := math.Abs(load[id] - want); d > 4.5*math.Sqrt(want)+1 {
				t.Errorf("probes %d: node %s got %.0f keys, expected share %.0f", probes, id, load[id], want)
			}
		}
	}
}

func TestSharesOfSmallSets(t *testing.T) {
	empty, _ := multiprobe.New(nil, multiprobe.Config{})
	if s := empty.Shares(); len(s) != 0 {
		t.Errorf("no nodes: %v", s)
	}
	one, _ := multiprobe.New([]kolco.Node{{ID: "a"}}, multiprobe.Config{})
	if s := one.Shares(); s["a"] != 1 {
		t.Errorf("one node: %v", s)
	}
}
