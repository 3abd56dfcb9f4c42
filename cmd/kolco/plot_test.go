package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// svgTexts returns every text an SVG file draws: title, axis labels,
// category names and legend entries.
func svgTexts(t *testing.T, file string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]bool{}
	dec := xml.NewDecoder(bytes.NewReader(data))
	inText := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return texts
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			inText = tok.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				texts[strings.TrimSpace(string(tok))] = true
			}
		}
	}
}

// TestPlotDrawsEveryValue draws the chart of each experiment given several
// values of a list flag and checks, in the SVG's texts, that each value
// has its own legend entry or category: none is dropped.
func TestPlotDrawsEveryValue(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		args  []string
		wants []string
	}{
		{"failure of three algorithms", []string{"sim", "failure", "--algo", "ring,rendezvous,maglev", "--keys", "5000"},
			[]string{"ring(V=160)", "rendezvous", "maglev"}},
		{"failure of two vnode counts", []string{"sim", "failure", "--vnodes", "1,100", "--keys", "5000"},
			[]string{"ring(V=1)", "ring(V=100)"}},
		{"failure cascade", []string{"sim", "failure", "--algo", "ring,jump", "--vnodes", "10", "--cascade", "2", "--keys", "5000"},
			[]string{"ring(V=10)", "jump"}},
		{"balance over vnodes and node counts", []string{"sim", "balance", "--vnodes", "1,10", "--nodes", "5,10", "--algo", "ring,jump", "--keys", "5000"},
			[]string{"ring, N=5", "ring, N=10", "jump, N=5", "jump, N=10"}},
		{"balance over node counts", []string{"sim", "balance", "--algo", "ring,maglev", "--nodes", "5,10", "--keys", "5000"},
			[]string{"ring(V=160)", "maglev"}},
		{"remap over vnodes", []string{"sim", "remap", "--vnodes", "1,10", "--algo", "ring,modulo", "--keys", "5000"},
			[]string{"ring, mean", "modulo"}},
		{"hotkeys", []string{"sim", "hotkeys", "--algo", "ring,rendezvous", "--keys", "100", "--requests", "2000"},
			[]string{"ring(V=160)", "rendezvous"}},
		{"replicas", []string{"sim", "replicas", "--algo", "ring,rendezvous", "--vnodes", "10,100", "--keys", "2000"},
			[]string{"ring(V=10)", "ring(V=100)", "rendezvous"}},
		{"lookup", []string{"sim", "lookup", "--algo", "ring,jump", "--nodes", "10,100", "--keys", "1000"},
			[]string{"ring(V=160)", "jump"}},
		{"weights", []string{"sim", "weights", "--algo", "ring,rendezvous", "--vnodes", "10,100", "--keys", "5000"},
			[]string{"ring(V=10) big", "ring(V=100) big", "rendezvous big"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".svg")
			code, _, errs := runCLI(t, "", append(c.args, "--plot", file)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			texts := svgTexts(t, file)
			for _, w := range c.wants {
				if !texts[w] {
					t.Errorf("the chart draws no %q", w)
				}
			}
		})
	}
}

// TestPlotBadPathNamesIt: a --plot file in a directory that does not
// exist is refused before the experiment runs, naming the path given.
func TestPlotBadPathNamesIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "out.png")
	for _, args := range [][]string{
		{"sim", "failure", "--keys", "100"},
		{"plan", "--nodes", "a,b", "--add", "c"},
	} {
		t.Run(args[0]+" "+args[1], func(t *testing.T) {
			code, out, errs := runCLI(t, "", append(args, "--plot", path)...)
			if code != 1 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, path) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one line naming %s", code, out, errs, path)
			}
		})
	}
	_, err := os.Stat(filepath.Dir(path))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the directory was created: %v", err)
	}
}
