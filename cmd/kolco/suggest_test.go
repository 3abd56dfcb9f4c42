package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMistakesNameTheNearestAndTheHelp: a misspelt flag or command, or a
// node list given as an argument, is a usage error (exit 2) of one line
// that names what was probably meant and the help to read.
func TestMistakesNameTheNearestAndTheHelp(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		wants []string
	}{
		{"node list as an argument", []string{"locate", "a,b,c"}, []string{"--nodes a,b,c", "'kolco locate --help'"}},
		{"node list to plan", []string{"plan", "a,b"}, []string{"--nodes a,b", "'kolco plan --help'"}},
		{"flag name as an argument", []string{"plan", "nodes"}, []string{"did you mean --nodes?", "'kolco plan --help'"}},
		{"unrelated argument", []string{"locate", "zzzzzz"}, []string{`unexpected argument "zzzzzz"`, "'kolco locate --help'"}},
		{"misspelt flag", []string{"locate", "--nodse", "a"}, []string{"unknown flag --nodse", "did you mean --nodes?", "'kolco locate --help'"}},
		{"swapped letters", []string{"plan", "--hti-rate", "1"}, []string{"did you mean --hit-rate?"}},
		{"unknown flag", []string{"locate", "--frobnicate"}, []string{"unknown flag --frobnicate", "'kolco locate --help'"}},
		{"unknown shorthand", []string{"locate", "-x"}, []string{"'x'", "'kolco locate --help'"}},
		{"bad flag value", []string{"locate", "--vnodes", "x"}, []string{`"--vnodes"`, "'kolco locate --help'"}},
		{"misspelt command", []string{"lcoate"}, []string{`unknown command "lcoate"`, `did you mean "locate"?`, "'kolco --help'"}},
		{"misspelt subcommand", []string{"sim", "artcle"}, []string{`did you mean "article"?`, "'kolco sim --help'"}},
		{"prefix of a command", []string{"pla"}, []string{`did you mean "plan"?`}},
		{"unknown command", []string{"frobnicate"}, []string{`unknown command "frobnicate"`, "'kolco --help'"}},
		{"misspelt algorithm to sim", []string{"sim", "remap", "--algo", "ring,rign"}, []string{`unknown --algo "rign"`, "did you mean ring?", "known: anchor"}},
		{"misspelt algorithm to locate", []string{"locate", "--algo", "jmup", "--nodes", "a"}, []string{`unknown --algo "jmup"`, "did you mean jump?", "twemproxy"}},
		{"misspelt algorithm to plan", []string{"plan", "--algo", "rendevous", "--nodes", "a", "--add", "b"}, []string{"did you mean rendezvous?"}},
		{"misspelt system", []string{"locate", "--algo", "twemprxy", "--nodes", "a"}, []string{"did you mean twemproxy?"}},
		{"unknown algorithm", []string{"sim", "remap", "--algo", "zzzzzz"}, []string{`unknown --algo "zzzzzz"; known: anchor`}},
		{"misspelt state algorithm", []string{"members", "state", "--init", "jmup"}, []string{`unknown --init "jmup"`, "did you mean jump?"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", c.args...)
			if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "kolco: ") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and one line", code, out, errs)
			}
			for _, w := range c.wants {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
			if strings.Contains(errs, "did you mean") && strings.Count(errs, "did you mean") != 1 {
				t.Errorf("stderr %q suggests more than once", errs)
			}
		})
	}
}

// TestProgramNamedOnce: errors wrapping the library's sentinels, which
// carry the prefix "kolco: " themselves, print it once, in front.
func TestProgramNamedOnce(t *testing.T) {
	dup := filepath.Join(t.TempDir(), "dup.txt")
	if err := os.WriteFile(dup, []byte("a\nb\na\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"locate", "--nodes-file", dup},
		{"plan", "--nodes-file", dup, "--add", "c", "--keys", "10"},
		{"locate", "--nodes", "a,a"},
		{"plan", "--nodes", "a,b", "--add", "b", "--keys", "10"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, _, errs := runCLI(t, "k\n", args...)
			if strings.Count(errs, "kolco:") != 1 || !strings.HasPrefix(errs, "kolco: ") {
				t.Errorf("stderr %q: want the program named once, in front", errs)
			}
		})
	}
}

func TestNearest(t *testing.T) {
	names := []string{"nodes", "nodes-file", "hash", "hit-rate", "help"}
	for typed, want := range map[string]string{
		"nodse": "nodes", "nodes": "nodes", "nodes-fil": "nodes-file", "hsah": "hash",
		"hti-rate": "hit-rate", "hlep": "help", "zzz": "", "": "", "x": "",
	} {
		if got := nearest(typed, names); got != want {
			t.Errorf("nearest(%q) = %q, want %q", typed, got, want)
		}
	}
}
