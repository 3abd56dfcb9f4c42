package sim

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/theory"
)

func setup(name string, v int) Setup {
	return Setup{Algo: name, Opts: algo.Options{VNodes: v}}
}

// binomialSD is the standard deviation of the share of k keys that fall in
// a region of probability p.
func binomialSD(p float64, k int) float64 { return math.Sqrt(p * (1 - p) / float64(k)) }

// TestRemapAddMovesTheFairShare: adding one node to N moves about 1/(N+1)
// of the keys, all onto the new node, for the minimally disruptive
// algorithms. Tolerance: 5 standard deviations of the measured mean, from
// the binomial noise of K keys and, for the ring, the spread of the new
// node's arc, sqrt(N/((N+1)V+1)) relative, over S name sets.
func TestRemapAddMovesTheFairShare(t *testing.T) {
	const n, k, sets, v = 10, 40_000, 8, 100
	p := 1.0 / (n + 1)
	res, err := Remap(RemapConfig{Setups: []Setup{setup("ring", v), setup("rendezvous", 0), setup("jump", 0)},
		Nodes: n, Add: 1, Keys: keys.Synthetic(k), Sets: sets})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Rows {
		sd := binomialSD(p, k)
		if row.Algo == "ring" {
			arc := p * math.Sqrt(float64(n)/float64((n+1)*v+1))
			sd = math.Sqrt(sd*sd + arc*arc)
		}
		sd /= math.Sqrt(sets)
		if math.Abs(row.AvgMoved-p) > 5*sd {
			t.Errorf("%s: moved %.4f, want 1/(N+1) = %.4f ± %.4f", row.Setup, row.AvgMoved, p, 5*sd)
		}
		if row.Theory != p {
			t.Errorf("%s: theory %v, want %v", row.Setup, row.Theory, p)
		}
		if row.ToNew != 1 {
			t.Errorf("%s: %.4f of moved keys went to the new node, want all", row.Setup, row.ToNew)
		}
	}
}

// TestRemapModulo: hash % N moves N/(N+1) of the keys from 10 to 11 nodes,
// and 1 - min/lcm in general, within 5 binomial standard deviations.
func TestRemapModulo(t *testing.T) {
	const k = 40_000
	for _, c := range []struct {
		n, add, remove int
		want           float64
	}{{10, 1, 0, 10.0 / 11}, {10, 10, 0, 0.5}, {10, 0, 1, 0.9}} {
		m := c.n + c.add - c.remove
		t.Run(fmt.Sprintf("%d->%d", c.n, m), func(t *testing.T) {
			res, err := Remap(RemapConfig{Setups: []Setup{setup("modulo", 0)}, Nodes: c.n, Add: c.add, Remove: c.remove,
				Keys: keys.Synthetic(k), Sets: 1})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Rows[0].AvgMoved
			if math.Abs(got-c.want) > 5*binomialSD(c.want, k) || res.Rows[0].Theory != theory.ModuloMoved(c.n, m) {
				t.Errorf("moved %.4f (theory %.4f), want %.4f", got, res.Rows[0].Theory, c.want)
			}
		})
	}
}

// TestBalanceSpreadFollowsTheory: the ring's measured spread follows
// sqrt((N-1)/(NV+1)) combined with the sampling noise. The mean of S sample
// standard deviations over N nodes has a relative standard error of about
// 1/sqrt(2(N-1)S) (8% here) and a small downward bias; the tolerance is 25%.
func TestBalanceSpreadFollowsTheory(t *testing.T) {
	const n, k, sets = 10, 20_000, 20
	res, err := Balance(BalanceConfig{Setups: []Setup{setup("ring", 1), setup("ring", 10), setup("ring", 100), setup("rendezvous", 0)},
		Nodes: []int{n}, Keys: keys.Synthetic(k), Sets: sets})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Rows {
		want := theory.Spread(row.Algo, n, row.VNodes, k)
		if math.Abs(row.Spread/want-1) > 0.25 {
			t.Errorf("%s: spread %.4f, theory %.4f", row.Setup, row.Spread, want)
		}
	}
	// More points, less spread: the ordering is far beyond the noise.
	if !(res.Rows[0].Spread > res.Rows[1].Spread && res.Rows[1].Spread > res.Rows[2].Spread) {
		t.Errorf("spread does not fall with V: %v, %v, %v", res.Rows[0].Spread, res.Rows[1].Spread, res.Rows[2].Spread)
	}
}

// TestBalanceMaxArcIsHarmonic: with one point per node the largest share
// is about H_N times the mean. Over 60 sets the standard error of the mean
// largest share is about 0.16; the tolerance is 0.7.
func TestBalanceMaxArcIsHarmonic(t *testing.T) {
	const n = 10
	res, err := Balance(BalanceConfig{Setups: []Setup{setup("ring", 1)}, Nodes: []int{n}, Keys: keys.Synthetic(20_000), Sets: 60})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Rows[0].MaxAvg, theory.Harmonic(n); math.Abs(got-want) > 0.7 || res.Rows[0].TheoryMax != want {
		t.Errorf("max/avg %.3f (theory %.3f), want H_10 = %.3f", got, res.Rows[0].TheoryMax, want)
	}
}

// TestFailureAbsorbers: with one point per node a ring hands a failed
// node's keys to one neighbour; rendezvous spreads them over every
// survivor; both move only the victim's keys.
func TestFailureAbsorbers(t *testing.T) {
	res, err := Failure(FailureConfig{Setups: []Setup{setup("ring", 1), setup("rendezvous", 0)}, Nodes: 10, Cascade: 3,
		Keys: keys.Synthetic(20_000)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 6 {
		t.Fatalf("%d steps, want 3 per setup", len(res.Steps))
	}
	for _, s := range res.Steps {
		if s.Moved != s.VictimShare {
			t.Errorf("%s step %d: moved %v, want only the victim's %v", s.Setup, s.Step, s.Moved, s.VictimShare)
		}
		want := 10 - s.Step
		if s.Setup == "ring(V=1)" {
			want = 1
		}
		if s.Receivers != want {
			t.Errorf("%s step %d: %d receivers, want %d", s.Setup, s.Step, s.Receivers, want)
		}
	}
	if _, err := Failure(FailureConfig{Setups: []Setup{setup("ring", 1)}, Nodes: 3, Victim: "nope", Cascade: 1, Keys: keys.Synthetic(10)}); !errors.Is(err, kolco.ErrUnknownNode) {
		t.Errorf("unknown victim: %v", err)
	}
}

// TestWeightsObtainedMatchRequested: rendezvous gives each node its
// weight's share within 5 binomial standard deviations.
func TestWeightsObtainedMatchRequested(t *testing.T) {
	const k = 30_000
	nodes := []kolco.Node{{ID: "small-1"}, {ID: "small-2"}, {ID: "big", Weight: 2}}
	res, err := Weights(WeightsConfig{Setups: []Setup{setup("rendezvous", 0)}, Nodes: nodes, Keys: keys.Synthetic(k)})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if math.Abs(r.Obtained-r.Requested) > 5*binomialSD(r.Requested, k) {
			t.Errorf("%s: obtained %.4f, requested %.4f", r.Node, r.Obtained, r.Requested)
		}
	}
}

// TestReplicasZoneAware: a zone-aware ring puts three replicas in three
// zones for every key.
func TestReplicasZoneAware(t *testing.T) {
	var nodes []kolco.Node
	for i := range 9 {
		nodes = append(nodes, kolco.Node{ID: "n" + strconv.Itoa(i), Zone: "z" + strconv.Itoa(i%3)})
	}
	s := setup("ring", 20)
	s.Opts.ZoneAware = true
	res, err := Replicas(ReplicasConfig{Setups: []Setup{s, setup("rendezvous", 0)}, Nodes: nodes, Replicas: 3, Keys: keys.Synthetic(5000)})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Rows[0]; r.FullZones != 1 || r.MeanZones != 3 || r.MeanNodes != 3 {
		t.Errorf("zone-aware ring: %+v, want every key in 3 zones on 3 nodes", r)
	}
	if r := res.Rows[1]; r.MeanNodes != 3 || r.FullZones >= 1 {
		t.Errorf("rendezvous: %+v, want 3 nodes and some keys in fewer than 3 zones", r)
	}
}

func TestLookupReportsEverySize(t *testing.T) {
	res, err := Lookup(LookupConfig{Setups: []Setup{setup("ring", 10), setup("jump", 0)}, Nodes: []int{3, 30}, Keys: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 4 {
		t.Errorf("%d rows, want 4", len(res.Rows))
	}
}

func TestBadConfigs(t *testing.T) {
	ks := keys.Synthetic(10)
	if _, err := Remap(RemapConfig{Setups: []Setup{setup("ring", 1)}, Nodes: 3, Keys: ks, Sets: 1}); !errors.Is(err, kolco.ErrBadConfig) {
		t.Errorf("remap without change: %v", err)
	}
	if _, err := Balance(BalanceConfig{Setups: []Setup{setup("ring", 1)}, Keys: ks, Sets: 1}); !errors.Is(err, kolco.ErrBadConfig) {
		t.Errorf("balance without node counts: %v", err)
	}
	if _, err := Failure(FailureConfig{Setups: []Setup{setup("ring", 1)}, Nodes: 3, Cascade: 3, Keys: ks}); !errors.Is(err, kolco.ErrBadConfig) {
		t.Errorf("cascade of every node: %v", err)
	}
	if _, err := Replicas(ReplicasConfig{Setups: []Setup{setup("ring", 1)}, Nodes: nodeNames("n", 3), Keys: ks}); !errors.Is(err, kolco.ErrBadCount) {
		t.Errorf("zero replicas: %v", err)
	}
}

// TestReplicasRendezvousIsRandom: rendezvous ignores zones, so its replica
// sets span all zones as often as random sets do, within 5 binomial
// standard deviations.
func TestReplicasRendezvousIsRandom(t *testing.T) {
	const k = 20_000
	var nodes []kolco.Node
	for i := range 12 {
		nodes = append(nodes, kolco.Node{ID: "n" + strconv.Itoa(i), Zone: "z" + strconv.Itoa(i%3)})
	}
	res, err := Replicas(ReplicasConfig{Setups: []Setup{setup("rendezvous", 0)}, Nodes: nodes, Replicas: 3, Keys: keys.Synthetic(k)})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rows[0]
	if want := 4.0 * 4 * 4 * 6 / (12 * 11 * 10); math.Abs(r.RandomFull-want) > 1e-12 || math.Abs(r.FullZones-want) > 5*binomialSD(want, k) {
		t.Errorf("rendezvous: %.4f of keys in 3 zones (random %.4f), want %.4f", r.FullZones, r.RandomFull, want)
	}
}
