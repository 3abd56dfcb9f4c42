package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/nodefile"
)

// TestOptionFlagsApplyOrAreRefused tries every option flag with every
// algorithm: a flag the algorithm reads changes where some of 300 keys go
// (three owners each, over nodes in three zones, so that zone awareness
// shows); one it ignores - its option changes nothing in the library - is
// refused as a usage error, by locate and by plan alike, rather than
// silently changing nothing.
func TestOptionFlagsApplyOrAreRefused(t *testing.T) {
	nodes := filepath.Join(t.TempDir(), "nodes.txt")
	if err := os.WriteFile(nodes, []byte("a 1 z1\nb 1 z1\nc 1 z2\nd 1 z2\ne 1 z3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for i := range 300 {
		in.WriteString("key-" + strconv.Itoa(i) + "\n")
	}
	flags := []struct {
		opt  algo.Option
		args []string
		set  func(*algo.Options)
	}{
		{algo.HashOption, []string{"--hash", "murmur3"}, func(o *algo.Options) { o.Hash = keyhash.Murmur3 }},
		{algo.VNodesOption, []string{"--vnodes", "7"}, func(o *algo.Options) { o.VNodes = 7 }},
		{algo.ArticleOption, []string{"--article"}, func(o *algo.Options) { o.Article = true }},
		{algo.ZoneAwareOption, []string{"--zone-aware"}, func(o *algo.Options) { o.ZoneAware = true }},
	}
	for _, a := range algo.All() {
		base := []string{"locate", "--algo", a.Name, "--nodes-file", nodes, "--replicas", "3"}
		code, plain, errs := runCLI(t, in.String(), base...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", a.Name, code, errs)
		}
		for _, f := range flags {
			t.Run(a.Name+"/"+f.args[0], func(t *testing.T) {
				code, out, errs := runCLI(t, in.String(), append(base, f.args...)...)
				if a.Options.Has(f.opt) {
					if code != 0 || out == plain {
						t.Errorf("exit %d (%s); output changed: %v; the algorithm reads the option", code, errs, out != plain)
					}
					return
				}
				var opts algo.Options
				f.set(&opts)
				if placesDifferently(t, a.Name, nodes, opts) {
					t.Errorf("the option changes the placement, yet Info.Options says %s ignores it", a.Name)
				}
				if code != 2 || out != "" || !strings.Contains(errs, "does not apply to --algo "+a.Name) {
					t.Errorf("locate: exit %d, stdout %d bytes, stderr %q: want a usage error", code, len(out), errs)
				}
				plan := append([]string{"plan", "--algo", a.Name, "--nodes-file", nodes, "--add", "f", "--keys", "10"}, f.args...)
				if code, _, errs := runCLI(t, "", plan...); code != 2 || !strings.Contains(errs, "does not apply") {
					t.Errorf("plan: exit %d, stderr %q: want a usage error", code, errs)
				}
			})
		}
	}
}

// TestSimRefusesOptionNoAlgorithmReads: an experiment comparing several
// algorithms takes an option flag when one of them reads it, and refuses
// it when none does.
func TestSimRefusesOptionNoAlgorithmReads(t *testing.T) {
	if code, _, errs := runCLI(t, "", "sim", "remap", "--algo", "jump,maglev", "--vnodes", "10", "--keys", "100"); code != 2 || !strings.Contains(errs, "--vnodes does not apply") {
		t.Errorf("--vnodes with jump and maglev: exit %d, stderr %q; want a usage error", code, errs)
	}
	if code, _, errs := runCLI(t, "", "sim", "remap", "--algo", "jump,ring", "--vnodes", "10", "--keys", "100"); code != 0 {
		t.Errorf("--vnodes with jump and ring: exit %d (%s); the ring reads it", code, errs)
	}
}

// placesDifferently reports whether some of 2000 keys get other owners
// (three each) from algorithm name over the nodes of the file path with
// opts than with the zero Options.
func placesDifferently(t *testing.T, name, path string, opts algo.Options) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	nodes, err := nodefile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	base, err := algo.New(name, nodes, algo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := algo.New(name, nodes, opts)
	if err != nil {
		t.Fatal(err)
	}
	var x, y []kolco.Node
	for i := range 2000 {
		k := "key-" + strconv.Itoa(i)
		x, _ = base.LocateN(x[:0], k, 3)
		y, _ = p.LocateN(y[:0], k, 3)
		for j := range x {
			if x[j].ID != y[j].ID {
				return true
			}
		}
	}
	return false
}
