package sim

import (
	"errors"
	"math"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/workload"
)

// TestHotkeysBoundedLoads: under a Zipf stream whose hottest key alone
// exceeds a node's fair share, the plain ring's node holding it carries
// more open requests than the bounded ring's capacity, while the bounded
// ring never exceeds ceil((1+ε) * open / N) on any node (its guarantee
// under sequential use) and spreads the hottest key over several nodes.
func TestHotkeysBoundedLoads(t *testing.T) {
	res, err := Hotkeys(HotkeysConfig{Setups: []Setup{setup("ring", 100)}, Nodes: 10, Keys: 1000, Zipf: 1.1,
		Requests: 50_000, InFlight: 100, Epsilon: 0.25, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := workload.ZipfWeights(1000, 1.1)[0]; res.HotShare != want || want < 0.125 {
		t.Fatalf("hot share %v, want %v (above 1.25/N)", res.HotShare, want)
	}
	plain, b := res.Rows[0], res.Rows[1]
	if b.Bound != 13 {
		t.Errorf("bound %d, want ceil(1.25 * 100 / 10) = 13", b.Bound)
	}
	if b.Peak > b.Bound {
		t.Errorf("bounded ring held %d open requests on a node, bound %d", b.Peak, b.Bound)
	}
	if plain.Peak <= b.Bound || plain.HotKeyNodes != 1 || b.HotKeyNodes < 2 || b.MaxAvg >= plain.MaxAvg {
		t.Errorf("plain %+v, bounded %+v: want the plain ring over the bound and the bounded one spreading the hot key", plain, b)
	}
	for _, l := range res.Loads {
		sum := 0.0
		for _, s := range l.Shares {
			sum += s
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("%s: shares sum to %v", l.Setup, sum)
		}
	}
	if _, err := Hotkeys(HotkeysConfig{Nodes: 3, Keys: 10, Requests: 10, InFlight: 0}); !errors.Is(err, kolco.ErrBadConfig) {
		t.Errorf("no window: %v", err)
	}
}
