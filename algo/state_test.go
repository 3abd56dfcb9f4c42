package algo_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/internal/testproc"
	"github.com/kolco-dev/kolco/kolcotest"
)

// lived returns a placement of the algorithm name that went through a
// history of adds and removals of single nodes and of several at once.
func lived(t testing.TB, name string) algo.Placement {
	t.Helper()
	pool := kolcotest.Nodes(12)
	p, err := algo.New(name, pool[:6], algo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []kolco.Change{
		{Remove: []string{pool[1].ID}},
		{Add: []kolco.Node{pool[7], pool[6]}},
		{Remove: []string{pool[4].ID, pool[0].ID}},
		{Add: []kolco.Node{pool[9]}},
		{Remove: []string{pool[7].ID}, Add: []kolco.Node{pool[1]}},
	} {
		if err := p.Apply(c); err != nil {
			t.Fatalf("%s: Apply(%+v): %v", name, c, err)
		}
	}
	return p
}

// where digests the owner of every key of a sample.
func where(t testing.TB, p kolco.Placement) uint64 {
	t.Helper()
	h := fnv.New64a()
	for _, k := range kolcotest.Keys(20000) {
		n, err := p.Locate(k)
		if err != nil {
			t.Fatal(err)
		}
		h.Write([]byte(n.ID + "\x00"))
	}
	return h.Sum64()
}

// saved is what one process hands to the next: the placement's algorithm,
// nodes and state, and what it saw.
type saved struct {
	Name        string
	Nodes       []kolco.Node
	State       []byte
	Fingerprint string
	Where       uint64
}

const restoreEnv = "KOLCO_ALGO_RESTORE_FILE"

// TestRestoreInAnotherProcess saves every algorithm's placement after a
// history of changes and restores it in a second process, the test binary
// run again: the restored placement must place every key of the sample
// alike and have the same fingerprint.
func TestRestoreInAnotherProcess(t *testing.T) {
	if path := os.Getenv(restoreEnv); path != "" {
		restoreHere(t, path)
		return
	}
	var all []saved
	for _, name := range algo.Names() {
		p := lived(t, name)
		fp, err := kolco.Fingerprint(p)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, saved{name, p.Nodes(), algo.State(p), fp, where(t, p)})
	}
	path := filepath.Join(t.TempDir(), "saved.json")
	data, _ := json.Marshal(all)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestoreInAnotherProcess$", "-test.v")
	cmd.Env = append(os.Environ(), restoreEnv+"="+path)
	out, err := testproc.CombinedOutput(cmd)
	if err != nil {
		t.Fatalf("the second process: %v\n%s", err, out)
	}
	t.Logf("the second process:\n%s", out)
}

// restoreHere is the second process: it restores every saved placement
// and compares with what the first process saw.
func restoreHere(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var all []saved
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		p, err := algo.Restore(s.Name, s.Nodes, algo.Options{}, s.State)
		if err != nil {
			t.Fatalf("%s: Restore: %v", s.Name, err)
		}
		fp, _ := kolco.Fingerprint(p)
		if fp != s.Fingerprint || where(t, p) != s.Where {
			t.Errorf("%s: restored in a new process: fingerprint %s, was %s; placement alike: %v", s.Name, fp, s.Fingerprint, where(t, p) == s.Where)
		}
		fresh, _ := algo.New(s.Name, s.Nodes, algo.Options{})
		t.Logf("%s: %d-byte state, fingerprint %s, a fresh build over the same nodes places alike: %v",
			s.Name, len(s.State), fp, where(t, fresh) == s.Where)
	}
}

func TestRestoreRefusesStateOfAnotherKind(t *testing.T) {
	jump := lived(t, "jump")
	for _, c := range []struct{ name, from string }{{"ring", "jump"}, {"anchor", "jump"}, {"jumpback", "jump"}, {"slots", "anchor"}} {
		p := lived(t, c.from)
		if _, err := algo.Restore(c.name, p.Nodes(), algo.Options{}, algo.State(p)); !errors.Is(err, kolco.ErrBadState) {
			t.Errorf("%s from a state of %s: %v, want ErrBadState", c.name, c.from, err)
		}
	}
	if _, err := algo.Restore("nope", jump.Nodes(), algo.Options{}, nil); !errors.Is(err, algo.ErrUnknown) {
		t.Errorf("unknown algorithm: %v", err)
	}
	if s := algo.State(lived(t, "ring")); s != nil {
		t.Errorf("State of a ring = %v, want nil", s)
	}
}

// FuzzRestore restores arbitrary states over the nodes of each algorithm's
// lived placement (the seeds are their real states): no panic, errors wrap
// kolco.ErrBadState, and a state that restores is the canonical encoding
// of the restored placement, which answers lookups and takes changes.
func FuzzRestore(f *testing.F) {
	names := algo.HistoryDependent()
	nodes := map[string][]kolco.Node{}
	for i, name := range names {
		p := lived(f, name)
		nodes[name] = p.Nodes()
		f.Add(uint8(i), algo.State(p))
	}
	f.Add(uint8(0), []byte{})                  // no state: the placement of New
	f.Add(uint8(3), []byte("kolco-state\x01")) // a header cut short
	f.Fuzz(func(t *testing.T, which uint8, state []byte) {
		name := names[int(which)%len(names)]
		p, err := algo.Restore(name, nodes[name], algo.Options{}, state)
		if err != nil {
			if !errors.Is(err, kolco.ErrBadState) {
				t.Fatalf("%s: error %v does not wrap ErrBadState", name, err)
			}
			return
		}
		if got := algo.State(p); len(state) > 0 && !slices.Equal(got, state) {
			t.Fatalf("%s: restored from %x, encodes %x", name, state, got)
		}
		for _, k := range kolcotest.Keys(50) {
			if _, err := p.Locate(k); err != nil {
				t.Fatalf("%s: Locate: %v", name, err)
			}
		}
		if err := p.Apply(kolco.Change{Remove: []string{nodes[name][0].ID}, Add: []kolco.Node{{ID: "fresh"}}}); err != nil {
			t.Fatalf("%s: Apply after Restore: %v", name, err)
		}
	})
}

// ExampleRestore keeps a jump placement's state across a restart: the
// restored placement places every key as the one that lived through the
// removals, where a fresh build over the same nodes would not.
func ExampleRestore() {
	nodes := kolcotest.Nodes(5)
	p, _ := algo.New("jump", nodes, algo.Options{})
	_ = p.Remove("node-1", "node-3")
	_ = p.Add(kolco.Node{ID: "node-5"})

	// Written beside the configuration, read after the restart.
	state, members := algo.State(p), p.Nodes()

	q, err := algo.Restore("jump", members, algo.Options{}, state)
	if err != nil {
		panic(err)
	}
	fresh, _ := algo.New("jump", members, algo.Options{})
	fp, _ := kolco.Fingerprint(p)
	fq, _ := kolco.Fingerprint(q)
	ff, _ := kolco.Fingerprint(fresh)
	fmt.Println("restored places alike:", fp == fq)
	fmt.Println("fresh build places alike:", fp == ff)
	// Output:
	// restored places alike: true
	// fresh build places alike: false
}
