package shards_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/compat"
	"github.com/kolco-dev/kolco/keyhash"
)

func nodes(ids ...string) []kolco.Node {
	out := make([]kolco.Node, len(ids))
	for i, id := range ids {
		out[i] = kolco.Node{ID: id, Addr: "10.0.0." + fmt.Sprint(i+1) + ":11211"}
	}
	return out
}

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("key:%d", i)
	}
	return out
}

// addr is a value function that records how often it is called.
type addrs struct{ calls map[string]int }

func (a *addrs) value(n kolco.Node) (string, error) {
	if a.calls == nil {
		a.calls = map[string]int{}
	}
	a.calls[n.ID]++
	return n.Addr, nil
}

// TestTablePlacesAsTheAlgorithm checks that a table places each key,
// tagged keys by their tag, on the node the algorithm names.
func TestTablePlacesAsTheAlgorithm(t *testing.T) {
	ns := nodes("c", "a", "b", "d")
	for _, dist := range []string{"ring", "jump", "maglev", "rendezvous", "slots"} {
		t.Run(dist, func(t *testing.T) {
			var a addrs
			l, err := shards.New(shards.Config{Distribution: dist, HashTag: "{}"}, ns, a.value)
			if err != nil {
				t.Fatal(err)
			}
			want, err := algo.New(dist, ns, algo.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range append(keys(2000), "x{key:1}y", "{}key:2", "{key:3") {
				owner, _ := want.Locate(shards.Tagged(k, [2]byte{'{', '}'}))
				got, err := l.Table().Lookup(k)
				if err != nil || got != owner.Addr {
					t.Fatalf("%q: %q, %v; want %q", k, got, err, owner.Addr)
				}
			}
		})
	}
}

// TestTwemproxyDistributions checks ketama and modula against the compat
// registry's twemproxy placement over the same servers.
func TestTwemproxyDistributions(t *testing.T) {
	ns := []kolco.Node{{ID: "10.0.0.1", Addr: "10.0.0.1:11211", Weight: 2}, {ID: "10.0.0.2:11212", Addr: "10.0.0.2:11212"},
		{ID: "cache-c", Addr: "10.0.0.3:11211", Weight: 3}}
	for _, dist := range []string{"ketama", "modula"} {
		t.Run(dist, func(t *testing.T) {
			l, err := shards.New(shards.Config{Distribution: dist, Hash: "md5", HashTag: "{}"}, ns, (&addrs{}).value)
			if err != nil {
				t.Fatal(err)
			}
			want, err := compat.Build("twemproxy", compat.Input{Distribution: dist, Hash: "md5", HashTag: "{}",
				Servers: "10.0.0.1:11211:2,10.0.0.2:11212:1,10.0.0.3:11211:3 cache-c"})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range append(keys(2000), "a{key:7}b") {
				owner, _ := want.Locate(k)
				if got, _ := l.Table().Lookup(k); got != owner.Addr {
					t.Fatalf("%q: %q, want %q", k, got, owner.Addr)
				}
			}
		})
	}
}

// TestUpdateIsAChangeNotARebuild checks that Update applies the change to
// the placement: with jump, removing a middle node and adding another
// gives the placement of those changes, which differs from a new
// placement over the final nodes, and only the changed nodes' values are
// made again.
func TestUpdateIsAChangeNotARebuild(t *testing.T) {
	var a addrs
	start := nodes("a", "b", "c", "d", "e")
	l, err := shards.New(shards.Config{Distribution: "jump"}, start, a.value)
	if err != nil {
		t.Fatal(err)
	}
	final := append(slices.Clone(start[:2]), start[3:]...)
	final = append(final, kolco.Node{ID: "f", Addr: "10.0.0.6:11211"})
	final[0].Addr = "10.0.1.1:11211" // readdressed: moves nothing, made again
	if err := l.Update(final); err != nil {
		t.Fatal(err)
	}
	changed, _ := algo.New("jump", start, algo.Options{})
	if err := changed.Apply(kolco.Diff(start, final)); err != nil {
		t.Fatal(err)
	}
	rebuilt, _ := algo.New("jump", final, algo.Options{})
	differs := 0
	for _, k := range keys(5000) {
		want, _ := changed.Locate(k)
		if got, _ := l.Table().Lookup(k); got != want.Addr {
			t.Fatalf("%q on %q, want %q", k, got, want.Addr)
		}
		if r, _ := rebuilt.Locate(k); r.ID != want.ID {
			differs++
		}
	}
	if differs == 0 {
		t.Fatal("a rebuild places every key as the change does: the test shows nothing")
	}
	if want := map[string]int{"a": 2, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1}; !mapsEqual(a.calls, want) {
		t.Fatalf("values made %v, want %v", a.calls, want)
	}
	if !slices.Equal(l.State(), algo.State(changed)) {
		t.Fatal("state differs from the changed placement's")
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRestore checks that a placement restored from another's state
// places alike.
func TestRestore(t *testing.T) {
	start := nodes("a", "b", "c", "d")
	var a addrs
	history, _ := shards.New(shards.Config{Distribution: "jump"}, start, a.value)
	if err := history.Update(slices.Delete(slices.Clone(start), 1, 2)); err != nil {
		t.Fatal(err)
	}
	late, err := shards.Restore(shards.Config{Distribution: "jump"}, history.Table().Nodes(), history.State(), a.value)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := shards.New(shards.Config{Distribution: "jump"}, history.Table().Nodes(), a.value)
	differs := 0
	for _, k := range keys(3000) {
		want, _ := history.Table().Lookup(k)
		if got, _ := late.Table().Lookup(k); got != want {
			t.Fatalf("%q on %q, want %q", k, got, want)
		}
		if got, _ := fresh.Table().Lookup(k); got != want {
			differs++
		}
	}
	if differs == 0 {
		t.Fatal("a new placement places as the history does: the test shows nothing")
	}
	if _, err := shards.Restore(shards.Config{Distribution: "jump"}, start, []byte("junk"), a.value); !errors.Is(err, kolco.ErrBadState) {
		t.Fatalf("junk state: %v", err)
	}
}

// TestUpdateErrorKeepsTable checks that a refused change leaves the
// current table in place.
func TestUpdateErrorKeepsTable(t *testing.T) {
	fail := errors.New("unresolvable")
	value := func(n kolco.Node) (string, error) {
		if n.ID == "bad" {
			return "", fail
		}
		return n.Addr, nil
	}
	l, err := shards.New(shards.Config{}, nodes("a", "b"), value)
	if err != nil {
		t.Fatal(err)
	}
	before := l.Table()
	if err := l.Update(nodes("a", "b", "bad")); !errors.Is(err, fail) {
		t.Fatalf("Update: %v", err)
	}
	if err := l.Update([]kolco.Node{{ID: "a", Weight: -1}}); !errors.Is(err, kolco.ErrBadWeight) {
		t.Fatalf("Update: %v", err)
	}
	if l.Table() != before {
		t.Fatal("a refused change replaced the table")
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  shards.Config
		want error
	}{
		{"unknown distribution", shards.Config{Distribution: "nope"}, algo.ErrUnknown},
		{"unknown key hash", shards.Config{KeyHash: "nope"}, keyhash.ErrUnknown},
		{"tag of one character", shards.Config{HashTag: "{"}, kolco.ErrBadConfig},
		{"twemproxy hash on ring", shards.Config{Hash: "md5"}, kolco.ErrBadConfig},
		{"key hash on ketama", shards.Config{Distribution: "ketama", KeyHash: "xxh3"}, kolco.ErrBadConfig},
		{"vnodes on jump", shards.Config{Distribution: "jump", VNodes: 10}, kolco.ErrBadConfig},
		{"negative vnodes", shards.Config{VNodes: -1}, kolco.ErrBadConfig},
		{"unknown twemproxy hash", shards.Config{Distribution: "ketama", Hash: "nope"}, kolco.ErrBadConfig},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := shards.New(c.cfg, nodes("a", "b"), (&addrs{}).value)
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			if !errors.Is(err, kolco.ErrBadConfig) {
				t.Fatalf("error %v does not wrap kolco.ErrBadConfig", err)
			}
		})
	}
}
