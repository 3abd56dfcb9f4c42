package kolcotest

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/kolco-dev/kolco"
)

// IsSentinel reports whether err wraps one of the root package's sentinel
// errors or one of extra.
func IsSentinel(err error, extra ...error) bool {
	for _, s := range append([]error{
		kolco.ErrNoNodes, kolco.ErrDuplicateNode, kolco.ErrUnknownNode, kolco.ErrBadWeight,
		kolco.ErrBadNodeID, kolco.ErrBadCount, kolco.ErrBadConfig,
	}, extra...) {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// FuzzSeeds adds a seed corpus for [Ops] to f: the empty script, lookups on
// an empty set and on a few nodes, removing every node, n larger than the
// set, bad weights and duplicate IDs.
func FuzzSeeds(f *testing.F) {
	for _, s := range [][]byte{
		{},                    // nothing at all
		{3, 3, 'k', 'e', 'y'}, // Locate on an empty set
		{4, 2, 'k', 'k', 9},   // LocateN on an empty set
		{0, 1, 16, 0, 2, 32, 1, 1, 1, 2, 3, 1, 'k', 4, 0, 7},                       // add two, remove all, look up
		{0, 1, 16, 0, 1, 16, 1, 9},                                                 // duplicate add, unknown remove
		{0, 1, 255, 0, 2, 254, 0, 3, 253, 2, 1, 0},                                 // bad weights
		{0, 1, 0, 0, 2, 0, 4, 1, 'x', 100, 4, 1, 'x', 0x80},                        // n > nodes, n < 0
		{5, 4, 4, 5, 4, 7, 2, 7, 48, 1, 7, 1, 4, 4, 0, 3},                          // batches with a duplicate inside
		{0, 1, 0, 0, 2, 0, 3, 3, 'k', 'e', 'y', 4, 2, 'k', 'k', 2, 3, 2, 'a', 'b'}, // look up on two nodes
		{5, 4, 0, 5, 0, 6, 0, 3, 5, 'h', 'e', 'l', 'l', 'o', 1, 4, 3, 2, 'h', 'i'}, // three added at once, one removed
	} {
		f.Add(s)
	}
}

// Ops builds a placement with a.New from no nodes (or, if that fails, a
// single node) and runs the script in data: adds, removals, reweights with
// valid and invalid weights, and lookups with n below 1 and above the set
// size. It fails t on a panic, on an error that wraps no sentinel, on a
// failed change that altered the set, and on lookups that contradict the
// set (a non-member owner, repeated replicas, a wrong replica count).
func Ops(t *testing.T, a Algorithm, data []byte) {
	p, err := a.New(nil)
	model := map[string]bool{}
	if err != nil {
		if !IsSentinel(err, a.Errors...) {
			t.Fatalf("New(nil): non-sentinel error %v", err)
		}
		if p, err = a.New([]kolco.Node{{ID: "n0"}}); err != nil {
			t.Fatalf("New(n0): %v", err)
		}
		model["n0"] = true
	}
	m, _ := p.(kolco.Mutable)
	r := &reader{data: data}
	for step := 0; step < 300 && !r.done(); step++ {
		op := r.byte() % 6
		if m == nil && op != 3 && op != 4 {
			op = 3 + op%2
		}
		switch op {
		case 0, 5:
			nodes := []kolco.Node{r.node()}
			if op == 5 {
				nodes = append(nodes, r.node(), r.node())
			}
			applied(t, a, p, model, m.Add(nodes...), func() {
				for _, n := range nodes {
					model[n.ID] = true
				}
			})
		case 1:
			ids := []string{r.id()}
			applied(t, a, p, model, m.Remove(ids...), func() { delete(model, ids[0]) })
		case 2:
			id, w := r.id(), r.weight()
			applied(t, a, p, model, m.Reweight(id, w), func() {})
		case 3:
			checkLocate(t, p, model, r.key())
		case 4:
			checkLocateN(t, p, model, r.key(), int(int8(r.byte())))
		}
	}
}

func applied(t *testing.T, a Algorithm, p kolco.Placement, model map[string]bool, err error, apply func()) {
	t.Helper()
	if err == nil {
		apply()
	} else if !IsSentinel(err, a.Errors...) {
		t.Fatalf("change: non-sentinel error %v", err)
	}
	got := ids(p.Nodes())
	want := make([]string, 0, len(model))
	for id := range model {
		want = append(want, id)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("after change (err %v): Nodes() = %v, want %v", err, got, want)
	}
}

func checkLocate(t *testing.T, p kolco.Placement, model map[string]bool, key string) {
	t.Helper()
	n, err := p.Locate(key)
	id := ""
	switch {
	case len(model) == 0 && (n != nil || !errors.Is(err, kolco.ErrNoNodes)):
		t.Fatalf("Locate(%q) on empty set = %v, %v", key, n, err)
	case len(model) > 0 && (err != nil || n == nil || !model[n.ID]):
		t.Fatalf("Locate(%q) = %v, %v; not a member", key, n, err)
	case n != nil:
		id = n.ID
	}
	if l, ok := p.(kolco.IDLocator); ok {
		if got, err2 := l.LocateID(key); got != id || !errors.Is(err2, err) {
			t.Fatalf("LocateID(%q) = %q, %v; Locate = %q, %v", key, got, err2, id, err)
		}
	}
	if l, ok := p.(kolco.IndexLocator); ok {
		i, err2 := l.LocateIndex(key)
		nodes := p.Nodes()
		if !errors.Is(err2, err) || (err == nil && (i < 0 || i >= len(nodes) || nodes[i].ID != id)) || (err != nil && i != -1) {
			t.Fatalf("LocateIndex(%q) = %d, %v; Locate = %q, %v; Nodes() = %v", key, i, err2, id, err, ids(nodes))
		}
	}
}

func checkLocateN(t *testing.T, p kolco.Placement, model map[string]bool, key string, n int) {
	t.Helper()
	got, err := p.LocateN(nil, key, n)
	if err != nil {
		if !errors.Is(err, kolco.ErrBadCount) && !errors.Is(err, kolco.ErrNoNodes) {
			t.Fatalf("LocateN(%q, %d): error %v", key, n, err)
		}
		if (n < 1) != errors.Is(err, kolco.ErrBadCount) && len(model) > 0 {
			t.Fatalf("LocateN(%q, %d): error %v", key, n, err)
		}
		return
	}
	if n < 1 || len(model) == 0 || len(got) != min(n, len(model)) {
		t.Fatalf("LocateN(%q, %d) with %d nodes = %v", key, n, len(model), ids(got))
	}
	seen := map[string]bool{}
	for _, o := range got {
		if seen[o.ID] || !model[o.ID] {
			t.Fatalf("LocateN(%q, %d) = %v: repeated or unknown node", key, n, ids(got))
		}
		seen[o.ID] = true
	}
}

// reader decodes a fuzz script; past the end it reads zeros.
type reader struct {
	data []byte
	pos  int
}

func (r *reader) done() bool { return r.pos >= len(r.data) }

func (r *reader) byte() byte {
	if r.done() {
		r.pos++
		return 0
	}
	r.pos++
	return r.data[r.pos-1]
}

// id returns one of 32 node IDs, or the empty ID.
func (r *reader) id() string {
	b := r.byte() % 33
	if b == 32 {
		return ""
	}
	return "n" + strconv.Itoa(int(b))
}

// weight returns 0, a multiple of 1/16, or an invalid weight.
func (r *reader) weight() float64 {
	switch b := r.byte(); b {
	case 255:
		return -1
	case 254:
		return math.NaN()
	case 253:
		return math.Inf(1)
	default:
		return float64(b) / 16
	}
}

func (r *reader) node() kolco.Node {
	return kolco.Node{ID: r.id(), Weight: r.weight()}
}

func (r *reader) key() string {
	n := int(r.byte() % 16)
	start := min(r.pos, len(r.data))
	end := min(start+n, len(r.data))
	r.pos += n
	return string(r.data[start:end])
}
