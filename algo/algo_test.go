package algo_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/keyhash"
)

func nodes(ids ...string) []kolco.Node {
	out := make([]kolco.Node, len(ids))
	for i, id := range ids {
		out[i] = kolco.Node{ID: id}
	}
	return out
}

func owners(t *testing.T, p kolco.Placement) []string {
	t.Helper()
	out := make([]string, 2000)
	for i := range out {
		n, err := p.Locate(fmt.Sprintf("key-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = n.ID
	}
	return out
}

// TestChangeVersusDirectBuild builds every algorithm over {a, b, c, d},
// adds e and removes b, and compares with a direct build of {a, c, d, e}:
// history-independent algorithms must agree key for key; the others must
// still place every key on a member.
func TestChangeVersusDirectBuild(t *testing.T) {
	for _, a := range algo.All() {
		t.Run(a.Name, func(t *testing.T) {
			p, err := algo.New(a.Name, nodes("a", "b", "c", "d"), algo.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Add(kolco.Node{ID: "e"}); err != nil {
				t.Fatal(err)
			}
			if err := p.Remove("b"); err != nil {
				t.Fatal(err)
			}
			direct, err := algo.New(a.Name, nodes("a", "c", "d", "e"), algo.Options{})
			if err != nil {
				t.Fatal(err)
			}
			changed, want := owners(t, p), owners(t, direct)
			if !a.HistoryDependent && !slices.Equal(changed, want) {
				t.Error("history-independent algorithm places differently after add/remove than a direct build")
			}
			for _, id := range changed {
				if id == "b" {
					t.Fatal("a key is still placed on the removed node")
				}
			}
		})
	}
}

func TestUnknownAndNames(t *testing.T) {
	if _, err := algo.New("nope", nodes("a"), algo.Options{}); !errors.Is(err, algo.ErrUnknown) {
		t.Errorf("unknown name: %v, want ErrUnknown", err)
	}
	names := algo.Names()
	if !slices.IsSorted(names) || !slices.Contains(names, "ring") {
		t.Errorf("Names() = %v: want sorted, with ring", names)
	}
	for _, n := range names {
		if _, ok := algo.Lookup(n); !ok {
			t.Errorf("Lookup(%q) fails", n)
		}
	}
}

func TestEmptyAndBadInputAreErrors(t *testing.T) {
	for _, a := range algo.All() {
		p, err := algo.New(a.Name, nil, algo.Options{})
		if err == nil {
			if _, err := p.Locate("k"); !errors.Is(err, kolco.ErrNoNodes) {
				t.Errorf("%s: Locate on no nodes: %v, want ErrNoNodes", a.Name, err)
			}
		} else if !errors.Is(err, kolco.ErrNoNodes) && !errors.Is(err, kolco.ErrBadConfig) {
			t.Errorf("%s: New with no nodes: %v", a.Name, err)
		}
		if _, err := algo.New(a.Name, nodes("a", "a"), algo.Options{}); !errors.Is(err, kolco.ErrDuplicateNode) {
			t.Errorf("%s: duplicate IDs: %v, want ErrDuplicateNode", a.Name, err)
		}
	}
}

func TestArticleRendezvous(t *testing.T) {
	ids := []string{"node-0", "node-1", "node-2", "node-3"}
	p, err := algo.New("rendezvous", nodes(ids...), algo.Options{Article: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		key := fmt.Sprintf("user:%d", i)
		// The article's rendezvous: the largest md5 of "node:key" wins.
		best := ids[0]
		for _, id := range ids[1:] {
			if keyhash.MD5(id+":"+key) > keyhash.MD5(best+":"+key) {
				best = id
			}
		}
		if n, _ := p.Locate(key); n.ID != best {
			t.Fatalf("%s -> %s, the article's rendezvous says %s", key, n.ID, best)
		}
	}
}

// TestOptionsAreWhatEachAlgorithmReads sets each field of Options alone to
// a value other than its default and checks that the placement changes -
// its fingerprint, or the owners and replicas of a sample of keys -
// exactly when the algorithm's table row lists the option.
func TestOptionsAreWhatEachAlgorithmReads(t *testing.T) {
	nodes := []kolco.Node{{ID: "a", Zone: "z1"}, {ID: "b", Zone: "z1"}, {ID: "c", Zone: "z2"},
		{ID: "d", Zone: "z2"}, {ID: "e", Zone: "z3"}, {ID: "f", Zone: "z3"}}
	options := []struct {
		name string
		opt  algo.Option
		set  func(*algo.Options)
	}{
		{"Hash", algo.HashOption, func(o *algo.Options) { o.Hash = keyhash.Murmur3 }},
		{"VNodes", algo.VNodesOption, func(o *algo.Options) { o.VNodes = 7 }},
		{"ZoneAware", algo.ZoneAwareOption, func(o *algo.Options) { o.ZoneAware = true }},
		{"Article", algo.ArticleOption, func(o *algo.Options) { o.Article = true }},
		{"TableSize", algo.TableSizeOption, func(o *algo.Options) { o.TableSize = 251 }},
		{"Slots", algo.SlotsOption, func(o *algo.Options) { o.Slots = 64 }},
		{"Capacity", algo.CapacityOption, func(o *algo.Options) { o.Capacity = 64 }}, // a power of two, as dx takes
		{"Probes", algo.ProbesOption, func(o *algo.Options) { o.Probes = 5 }},
		{"Epsilon", algo.EpsilonOption, func(o *algo.Options) { o.Epsilon = 0.9 }},
	}
	var every algo.Option
	for _, o := range options {
		every |= o.opt
	}
	for _, a := range algo.All() {
		if !every.Has(a.Options) {
			t.Errorf("%s lists an option this test does not try", a.Name)
		}
		base := placement(t, a.Name, nodes, algo.Options{})
		for _, o := range options {
			t.Run(a.Name+"/"+o.name, func(t *testing.T) {
				var opts algo.Options
				o.set(&opts)
				changed := placement(t, a.Name, nodes, opts) != base
				if changed != a.Options.Has(o.opt) {
					t.Errorf("option changes the placement: %v; the table lists it: %v", changed, a.Options.Has(o.opt))
				}
			})
		}
	}
}

// placement returns the fingerprint of the algorithm name over nodes with
// opts, and the three owners of each of 300 keys.
func placement(t *testing.T, name string, nodes []kolco.Node, opts algo.Options) string {
	t.Helper()
	p, err := algo.New(name, nodes, opts)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := kolco.Fingerprint(p)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(fp)
	for i := range 300 {
		owners, err := p.LocateN(nil, fmt.Sprintf("key-%d", i), 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range owners {
			b.WriteString(" " + n.ID)
		}
	}
	return b.String()
}

// TestFailureIsANilPlacement builds every registered algorithm with
// input it refuses, through New and through Restore: the Placement
// returned beside the error must be a nil interface, so that a caller's
// p == nil holds, rather than an interface holding a nil pointer whose
// first Locate panics.
func TestFailureIsANilPlacement(t *testing.T) {
	for _, a := range algo.All() {
		t.Run(a.Name, func(t *testing.T) {
			p, err := algo.New(a.Name, nodes("a", "a"), algo.Options{})
			if !errors.Is(err, kolco.ErrDuplicateNode) {
				t.Fatalf("New with duplicate IDs: %v, want ErrDuplicateNode", err)
			}
			if p != nil {
				t.Errorf("New failed but returned a non-nil Placement (%T)", p)
			}
			p, err = algo.Restore(a.Name, nodes("a", "b"), algo.Options{}, []byte("not a state"))
			if !errors.Is(err, kolco.ErrBadState) {
				t.Fatalf("Restore with a bad state: %v, want ErrBadState", err)
			}
			if p != nil {
				t.Errorf("Restore failed but returned a non-nil Placement (%T)", p)
			}
		})
	}
}

// TestUnweightedRefusalSaysWhy gives every algorithm a node of weight 2:
// one without weights refuses it with kolco.ErrBadWeight, in a message
// that names the algorithm once and does not carry ErrBadWeight's own
// text, which speaks of positive finite numbers and would contradict a
// weight of 2.
func TestUnweightedRefusalSaysWhy(t *testing.T) {
	refused := 0
	for _, a := range algo.All() {
		t.Run(a.Name, func(t *testing.T) {
			_, err := algo.New(a.Name, []kolco.Node{{ID: "a"}, {ID: "big", Weight: 2}}, algo.Options{})
			if !errors.Is(err, kolco.ErrBadWeight) {
				return // takes weights, or ignores them
			}
			refused++
			msg := err.Error()
			if n := strings.Count(msg, a.Name); n != 1 {
				t.Errorf("%q names %s %d times, want once", msg, a.Name, n)
			}
			if strings.Contains(msg, kolco.ErrBadWeight.Error()) {
				t.Errorf("%q says a weight of 2 is not a positive finite number", msg)
			}
			if !strings.Contains(msg, `"big"`) {
				t.Errorf("%q does not name the node", msg)
			}
		})
	}
	if refused == 0 {
		t.Error("no algorithm refuses weights: the test checks nothing")
	}
}
