package nodeset_test

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// state is a test algorithm's state: its set and the deltas that built it.
type state struct {
	set     nodeset.Set
	history []nodeset.Delta
}

var errFull = errors.New("full")

// engine returns an engine over state that refuses more than limit nodes
// with errFull.
func engine(unweighted bool, limit int) *nodeset.Engine[state] {
	return &nodeset.Engine[state]{
		Name:       "test",
		Unweighted: unweighted,
		Set:        func(s *state) nodeset.Set { return s.set },
		Next: func(old *state, d nodeset.Delta) (*state, error) {
			if d.New.Len() > limit {
				return nil, errFull
			}
			return &state{set: d.New, history: append(slices.Clip(old.history), d)}, nil
		},
	}
}

func TestEngineInitSortsAndApplies(t *testing.T) {
	e := engine(false, 10)
	if err := e.Init(&state{}, []kolco.Node{{ID: "b"}, {ID: "a"}}); err != nil {
		t.Fatal(err)
	}
	s := e.Load()
	if got := ids(s.history[0].Added); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Init hands the nodes to Next as %v, want ID order", got)
	}
	if err := e.Add(kolco.Node{ID: "d"}, kolco.Node{ID: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := e.Reweight("a", 2); err != nil {
		t.Fatal(err)
	}
	if err := e.Remove("b"); err != nil {
		t.Fatal(err)
	}
	s = e.Load()
	if got := ids(s.set.Nodes()); !slices.Equal(got, []string{"a", "c", "d"}) || s.set.At(0).Weight != 2 {
		t.Errorf("after the changes: %+v", s.set.Nodes())
	}
	if got := ids(s.history[1].Added); !slices.Equal(got, []string{"d", "c"}) {
		t.Errorf("Add hands the nodes to Next as %v, want the call's order", got)
	}
}

// TestEngineErrorsChangeNothing checks that every refused change, whether
// the set, the weight rule or Next refuses it, leaves the state as it was.
func TestEngineErrorsChangeNothing(t *testing.T) {
	e := engine(true, 3)
	if err := e.Init(&state{}, []kolco.Node{{ID: "a"}, {ID: "b"}}); err != nil {
		t.Fatal(err)
	}
	before := e.Load()
	cases := []struct {
		name string
		do   func() error
		want error
	}{
		{"Duplicate", func() error { return e.Add(kolco.Node{ID: "a"}) }, kolco.ErrDuplicateNode},
		{"Unknown", func() error { return e.Remove("z") }, kolco.ErrUnknownNode},
		{"Unweighted", func() error { return e.Add(kolco.Node{ID: "c", Weight: 2}) }, kolco.ErrBadWeight},
		{"UnweightedUpdate", func() error { return e.Reweight("a", 3) }, kolco.ErrBadWeight},
		{"ReweightZero", func() error { return e.Reweight("a", 0) }, kolco.ErrBadWeight},
		{"ReweightUnknown", func() error { return e.Reweight("z", 1) }, kolco.ErrUnknownNode},
		{"Next", func() error { return e.Add(kolco.Node{ID: "c"}, kolco.Node{ID: "d"}) }, errFull},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.do(); !errors.Is(err, c.want) {
				t.Fatalf("error %v, want one wrapping %v", err, c.want)
			}
			if e.Load() != before {
				t.Fatal("a refused change published a state")
			}
		})
	}
	if err := e.Init(&state{}, []kolco.Node{{ID: "x", Weight: 2}}); !errors.Is(err, kolco.ErrBadWeight) {
		t.Errorf("Init with a weight on an unweighted engine: %v", err)
	}
	if err := e.Reweight("a", 1); err != nil {
		t.Errorf("Reweight to 1 on an unweighted engine: %v", err)
	}
}

// TestCellReadersSeeWholeStates runs readers against a writer (use -race):
// every state a reader loads was published whole.
func TestCellReadersSeeWholeStates(t *testing.T) {
	type pair struct{ a, b int }
	var c nodeset.Cell[pair]
	c.Store(&pair{})
	var stop atomic.Bool
	var wg sync.WaitGroup
	var torn atomic.Int64
	for range 2 {
		wg.Go(func() {
			for !stop.Load() {
				if p := c.Load(); p.a != p.b {
					torn.Add(1)
				}
			}
		})
	}
	for i := range 2000 {
		if err := c.Update(func(old *pair) (*pair, error) { return &pair{old.a + 1, old.b + 1}, nil }); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			_ = c.Update(func(*pair) (*pair, error) { return nil, errFull })
		}
	}
	stop.Store(true)
	wg.Wait()
	if p := c.Load(); p.a != 2000 || torn.Load() != 0 {
		t.Fatalf("final %+v, %d torn reads", *p, torn.Load())
	}
}
