package membership_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/membership"
)

// FuzzParseNutcracker checks that any file either gives valid, distinct
// nodes or fails with ErrBadContent, and never panics.
func FuzzParseNutcracker(f *testing.F) {
	f.Add("p:\n  servers:\n   - 127.0.0.1:11211:1 a\n   - 127.0.0.1:11212:2\n", "p")
	f.Add("p:\n  servers: [\"h:1:1\"]\n  zones: {h:1: z}\nkolco: {}\n", "")
	f.Add("p:\n  servers: [\"::1:11211:1\", \"/tmp/s:3 sock\"]\n", "")
	f.Add("a: {servers: [x]}\nb: 1\n", "b")
	f.Add("p: [\n", "p")
	f.Add("&a [*a]", "")
	f.Fuzz(func(t *testing.T, data, pool string) {
		nodes, err := membership.ParseNutcracker([]byte(data), pool)
		if err != nil {
			if !errors.Is(err, membership.ErrBadContent) {
				t.Fatalf("error %v does not wrap ErrBadContent", err)
			}
			return
		}
		membership.SortNodes(nodes)
		if err := (membership.Version{Nodes: nodes}).Validate(); err != nil {
			t.Fatalf("parsed an invalid node set %+v: %v", nodes, err)
		}
		for _, n := range nodes {
			if n.Addr == "" {
				t.Fatalf("node %q without an address", n.ID)
			}
		}
	})
}

// FuzzParsePlacementState checks that any stored value either reads as a
// state that encodes back to the same bytes and places over its own nodes,
// or fails with ErrBadContent, and never panics.
func FuzzParsePlacementState(f *testing.F) {
	for _, name := range algo.HistoryDependent() {
		ps, err := membership.NewPlacementState(name, kolcotest.Nodes(3), algo.Options{Slots: 16, Capacity: 4})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(ps.Marshal())
	}
	f.Add([]byte(`{"algorithm":"jump","nodes":[],"state":null}`))
	f.Add([]byte(`{"algorithm":"slots","nodes":[{"id":"a","weight":0.5}],"state":""}`))
	f.Add([]byte(`{"algorithm":"ring","nodes":[],"state":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := membership.ParsePlacementState(data)
		if err != nil {
			if !errors.Is(err, membership.ErrBadContent) {
				t.Fatalf("error %v does not wrap ErrBadContent", err)
			}
			return
		}
		if string(ps.Marshal()) != string(data) {
			t.Fatalf("read %q, encodes back as %q", data, ps.Marshal())
		}
		if _, err := ps.Placement(ps.Nodes, algo.Options{}); err != nil {
			t.Fatalf("a state read back does not place over its own nodes: %v", err)
		}
	})
}

// FuzzPlacementStateChanges builds a state and a node set from the input
// and checks what writers and followers rely on: a follower's placement
// from a state, and the placement from the state a writer stores for the
// same nodes, are the same placement, or both refused.
func FuzzPlacementStateChanges(f *testing.F) {
	// which indexes algo.HistoryDependent(): anchor, binomial, dx, flip, jump,
	// jumpback, power, slots.
	f.Add(uint8(4), []byte{0x0f, 0x03}, []byte{0x1c}) // jump: two removals and an addition
	f.Add(uint8(0), []byte{0x07}, []byte{0x05, 0x80}) // anchor
	f.Add(uint8(7), []byte{0x1f}, []byte{0x0e, 0x81}) // slots with a weight
	f.Add(uint8(2), []byte{0x1f}, []byte{0x0e, 0x81}) // dx with a weight
	f.Add(uint8(5), []byte{}, []byte{0x1f})
	names := algo.HistoryDependent()
	pool := kolcotest.Nodes(5)
	nodesOf := func(b byte) []kolco.Node {
		var nodes []kolco.Node
		for i, n := range pool {
			if b&(1<<i) != 0 {
				if b&0x80 != 0 {
					n.Weight = float64(i + 1)
				}
				nodes = append(nodes, n)
			}
		}
		return nodes
	}
	f.Fuzz(func(t *testing.T, which uint8, history, next []byte) {
		name := names[int(which)%len(names)]
		ps, err := membership.NewPlacementState(name, nil, algo.Options{Slots: 32, Capacity: 8})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range history {
			if n, err := ps.Next(nodesOf(b)); err == nil {
				ps = n
			}
		}
		for _, b := range next {
			nodes := nodesOf(b)
			p, err := ps.Placement(nodes, algo.Options{})
			stored, nerr := ps.Next(nodes)
			if (err == nil) != (nerr == nil) {
				t.Fatalf("%s: placement error %v, next state error %v", name, err, nerr)
			}
			if err != nil {
				continue
			}
			q, err := stored.Placement(nodes, algo.Options{})
			if err != nil || !stored.Current(nodes) {
				t.Fatalf("%s: the next state does not place over its nodes: %v", name, err)
			}
			fp, _ := kolco.Fingerprint(p)
			fq, _ := kolco.Fingerprint(q)
			if fp != fq || !slices.Equal(ids(p.Nodes()), ids(nodes)) {
				t.Fatalf("%s: a follower's placement %s, the stored state's %s", name, fp, fq)
			}
		}
	})
}

func ids(nodes []kolco.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.ID
	}
	return out
}
