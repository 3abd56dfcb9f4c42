package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSharpEdges: what a new user meets first. Each mistake is refused
// with one clear line - usage errors exit 2, failures while running exit
// 1 - and input is read as written.
func TestSharpEdges(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	comma, dup := file("comma.txt", "cache-a,1\ncache-b 1\n"), file("dup.txt", "a\nb\na\n")
	weighted := file("weighted.txt", "a\nb 2\nc\n")
	list := file("list.txt", "a, b, c\n")
	for _, c := range []struct {
		name  string
		args  []string
		stdin string
		code  int
		wants []string
		not   string
	}{
		{"node file line with a comma", []string{"locate", "--nodes-file", comma}, "k\n", 1, []string{"line 1", `"cache-a 1"`}, ""},
		{"node file line listing nodes", []string{"locate", "--nodes-file", list}, "k\n", 1, []string{"line 1", `"a", "b", "c"`, "one per line"}, `"a "`},
		{"hit rate as a percentage", []string{"plan", "--nodes", "a,b", "--add", "c", "--hit-rate", "95"}, "", 2, []string{"--hit-rate", "0.95"}, "--rps"},
		{"negative Zipf exponent", []string{"sim", "hotkeys", "--zipf", "-1"}, "", 2, []string{"--zipf"}, "--epsilon"},
		{"no name sets", []string{"sim", "remap", "--sets", "0"}, "", 2, []string{"--sets"}, "--nodes"},
		{"no zones", []string{"sim", "replicas", "--zones", "0"}, "", 2, []string{"--zones"}, "--nodes"},
		{"sim of more replicas than nodes", []string{"sim", "replicas", "--nodes", "3", "--replicas", "5"}, "", 2, []string{"--replicas 5", "at most 3"}, ""},
		{"more replicas than nodes", []string{"locate", "--nodes", "a,b,c", "--replicas", "5"}, "k\n", 2, []string{"--replicas 5", "at most 3"}, ""},
		{"every node removed", []string{"locate", "--nodes", "a", "--remove", "a"}, "", 2, []string{"--remove a takes away every node"}, ""},
		{"no input", []string{"locate", "--nodes", "a,b"}, "", 1, []string{"no keys on stdin"}, ""},
		{"only empty lines", []string{"locate", "--nodes", "a,b"}, "\n\r\n\n", 1, []string{"no keys on stdin"}, ""},
		{"duplicate ID in a node file", []string{"locate", "--nodes-file", dup}, "k\n", 1, []string{`duplicate node ID: "a"`, "line 3"}, "syntax"},
		{"sim weights of algorithms without weights", []string{"sim", "weights", "--algo", "jump,flip", "--keys", "100"}, "", 2, []string{"--algo jump,flip", "take no weights", "ring, rendezvous"}, "positive finite"},
		{"a weighted node under jump", []string{"sim", "failure", "--algo", "jump", "--nodes-file", weighted, "--keys", "100"}, "", 1, []string{`"b"`, "takes no weights"}, "jump: jump"},
		{"data in an unknown unit", []string{"plan", "--nodes", "a", "--add", "b", "--data", "3XB"}, "", 2, []string{`"3XB"`, "k, M, G, T, P", "Ki, Mi, Gi, Ti, Pi"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, c.stdin, c.args...)
			if code != c.code || out != "" || strings.Count(errs, "\n") != 1 || strings.Count(errs, "kolco:") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and one line", code, out, errs, c.code)
			}
			for _, w := range c.wants {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
			if c.not != "" && strings.Contains(errs, c.not) {
				t.Errorf("stderr %q says %q", errs, c.not)
			}
		})
	}
}

// TestInputReadAsWritten: empty lines are not keys; a key file splits on
// ASCII blanks only, so a key holding a no-break space is one key.
func TestInputReadAsWritten(t *testing.T) {
	code, out, errs := runCLI(t, "k1\n\n\r\nk2\n", "locate", "--nodes", "a,b")
	if lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "k1\t") || !strings.HasPrefix(lines[1], "k2\t") {
		t.Errorf("exit %d (%s), output %q; want the owners of k1 and k2 only", code, errs, out)
	}
	keys := filepath.Join(t.TempDir(), "keys.txt")
	if err := os.WriteFile(keys, []byte("caf\u00a0e 10\nnormal 20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "", "plan", "--nodes", "a,b", "--add", "c", "--keys-file", keys, "--json")
	var p struct {
		Keys  int     `json:"keys"`
		Bytes float64 `json:"total_bytes"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil || p.Keys != 2 || p.Bytes != 30 {
		t.Errorf("exit %d (%s): %d keys of %v bytes; want 2 keys of 30 bytes", code, errs, p.Keys, p.Bytes)
	}
}

// TestOneIsSingular runs the commands with counts of one - one node, one
// key, one zone, one name set, one owner - and checks that no output says
// "1 nodes" or the like.
func TestOneIsSingular(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one.txt")
	if err := os.WriteFile(one, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plural := regexp.MustCompile(`(^|[^0-9.])1 (nodes|keys|zones|owners|distinct owners|requests|name sets|values|failures)\b|\(s\)`)
	for _, args := range [][]string{
		{"sim", "remap", "--nodes", "2", "--remove", "1", "--keys", "1", "--sets", "1"},
		{"sim", "balance", "--nodes", "1", "--keys", "1"},
		{"sim", "failure", "--nodes", "2", "--keys", "1"},
		{"sim", "replicas", "--nodes", "1", "--zones", "1", "--replicas", "1", "--keys", "1"},
		{"sim", "hotkeys", "--nodes", "1", "--keys", "1", "--requests", "1", "--in-flight", "1"},
		{"sim", "weights", "--keys", "1"},
		{"sim", "lookup", "--nodes", "1", "--keys", "1"},
		{"plan", "--nodes", "a,b", "--remove", "b", "--keys", "1"},
		{"members", "list", "--file", one},
		{"locate", "--nodes", "a", "--replicas", "2"},
		{"sim", "failure", "--nodes", "1"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, out, errs := runCLI(t, "k\n", args...)
			if m := plural.FindString(out + errs); m != "" {
				t.Errorf("output says %q:\n%s%s", m, out, errs)
			}
		})
	}
	// The charts' titles too.
	for _, args := range [][]string{
		{"sim", "failure", "--nodes", "2", "--keys", "1"},
		{"sim", "replicas", "--nodes", "1", "--zones", "1", "--replicas", "1", "--keys", "1"},
		{"sim", "balance", "--nodes", "1", "--keys", "1", "--vnodes", "1,2"},
		{"plan", "--nodes", "a,b", "--remove", "b", "--keys", "1"},
	} {
		t.Run(strings.Join(args, " ")+" --plot", func(t *testing.T) {
			file := filepath.Join(dir, "chart.svg")
			if code, _, errs := runCLI(t, "", append(args, "--plot", file)...); code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for text := range svgTexts(t, file) {
				if m := plural.FindString(text); m != "" {
					t.Errorf("chart says %q in %q", m, text)
				}
			}
		})
	}
}

// TestNodesFlagKinds: --nodes takes IDs in locate and plan, one count in
// sim remap, failure, hotkeys and replicas, and a list of counts in sim
// balance and lookup; a value of another kind is refused with one line
// saying which kind the command takes, never read as the wrong kind.
func TestNodesFlagKinds(t *testing.T) {
	for _, c := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"locate", "--nodes", "10"}, []string{`one node named "10"`, "node IDs"}},
		{[]string{"plan", "--nodes", "10", "--add", "11"}, []string{`one node named "10"`, "--nodes-file"}},
		{[]string{"sim", "remap", "--nodes", "a,b"}, []string{"a node count here, not node IDs", "sim remap --help"}},
		{[]string{"sim", "remap", "--nodes", "10,100"}, []string{"one node count here, not a list", "sim balance"}},
		{[]string{"sim", "failure", "--nodes", "a,b"}, []string{"not node IDs", "--nodes-file"}},
		{[]string{"sim", "replicas", "--nodes", "3,4"}, []string{"one node count here, not a list"}},
		{[]string{"sim", "hotkeys", "--nodes", "ten"}, []string{"a node count here"}},
		{[]string{"sim", "balance", "--nodes", "a,b"}, []string{"node counts here", "not node IDs", `"a,b"`}},
		{[]string{"sim", "lookup", "--nodes", "10,cache-a"}, []string{"node counts here"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errs := runCLI(t, "k\n", c.args...)
			if code != 2 || out != "" || strings.Count(errs, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and one line", code, out, errs)
			}
			for _, w := range c.wants {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
		})
	}
	// Numeric IDs are still IDs when there are several of them.
	if code, out, errs := runCLI(t, "k\n", "locate", "--nodes", "1,2,3"); code != 0 || !strings.HasPrefix(out, "k\t") {
		t.Errorf("locate --nodes 1,2,3: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
