package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/ring"
	"github.com/kolco-dev/kolco/sim/article"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestLocateMatchesLibrary(t *testing.T) {
	nodes := []kolco.Node{{ID: "10.0.0.1:11211"}, {ID: "10.0.0.2:11211"}, {ID: "cache-c"}}
	r, err := ring.New(nodes, ring.Config{VNodes: 50, Hash: keyhash.Murmur3})
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"user:1", "user:2", "", "ключ", "a b c"}
	code, out, errs := runCLI(t, strings.Join(keys, "\r\n")+"\n",
		"locate", "--nodes", "10.0.0.1:11211, 10.0.0.2:11211,cache-c", "--vnodes", "50", "--hash", "murmur3", "--replicas", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var want strings.Builder
	for _, k := range keys {
		if k == "" {
			continue // an empty line is not a key
		}
		owners, _ := r.LocateN(nil, k, 2)
		want.WriteString(k + "\t" + owners[0].ID + "\t" + owners[1].ID + "\n")
	}
	if out != want.String() {
		t.Errorf("output:\n%s\nwant:\n%s", out, want.String())
	}
}

func TestLocateArticleAndNodesFile(t *testing.T) {
	code, out, _ := runCLI(t, "user:42\n", "locate", "--article", "--nodes", "cache-a,cache-b,cache-c", "--replicas", "2")
	if code != 0 || out != "user:42\tcache-a\tcache-b\n" {
		t.Errorf("article demo: exit %d, output %q; the article places user:42 on cache-a, cache-b", code, out)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "nodes.txt")
	os.WriteFile(file, []byte("# id weight zone\na 1 z1\nb 2 z1\nc 1 z2\n"), 0o644)
	code, out, errs := runCLI(t, "k1\nk2\nk3\n", "locate", "--nodes-file", file, "--replicas", "2", "--zone-aware")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 || (f[1] == "c") == (f[2] == "c") {
			t.Errorf("zone-aware replicas %q do not span both zones", line)
		}
	}
}

// TestSeedIsDeprecatedArticle: --seed, the former name of --article, still
// works in locate and in the experiments, says on stderr that it is
// deprecated, and is refused by name where --article would be.
func TestSeedIsDeprecatedArticle(t *testing.T) {
	for _, args := range [][]string{
		{"locate", "--nodes", "cache-a,cache-b,cache-c", "--replicas", "2"},
		{"sim", "balance", "--keys", "1000"},
	} {
		t.Run(args[0], func(t *testing.T) {
			code, want, errs := runCLI(t, "user:42\n", append(args, "--article")...)
			if code != 0 || strings.Contains(errs, "deprecated") {
				t.Fatalf("--article: exit %d, stderr %q", code, errs)
			}
			code, got, errs := runCLI(t, "user:42\n", append(args, "--seed")...)
			if code != 0 || got != want {
				t.Errorf("--seed: exit %d, output %q; --article gives %q", code, got, want)
			}
			if !strings.Contains(errs, "--seed has been deprecated, use --article") {
				t.Errorf("--seed: stderr %q, want a deprecation line", errs)
			}
		})
	}
	code, _, errs := runCLI(t, "k\n", "locate", "--algo", "jump", "--nodes", "a,b", "--seed")
	if code != 2 || !strings.Contains(errs, "--seed does not apply to --algo jump") {
		t.Errorf("--seed with jump: exit %d, stderr %q; want a usage error naming --seed", code, errs)
	}
}

func TestLocateAddRemove(t *testing.T) {
	_, direct, _ := runCLI(t, "k1\nk2\nk3\nk4\n", "locate", "--nodes", "a,c,d")
	code, changed, errs := runCLI(t, "k1\nk2\nk3\nk4\n", "locate", "--nodes", "a,b", "--add", "c,d", "--remove", "b")
	if code != 0 || changed != direct {
		t.Errorf("a,b +c,d -b gave %q (exit %d, %s), a,c,d gives %q", changed, code, errs, direct)
	}
}

func TestExitCodesAndErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("a\nb -3\n"), 0o644)
	for _, c := range []struct {
		name  string
		args  []string
		stdin string
		code  int
		msg   string
	}{
		{"unknown command", []string{"locat"}, "", 2, "unknown command"},
		{"unknown flag", []string{"locate", "--bogus"}, "", 2, "unknown flag"},
		{"bad flag value", []string{"locate", "--vnodes", "x"}, "", 2, "invalid argument"},
		{"no nodes", []string{"locate"}, "", 2, "no nodes"},
		{"zero vnodes", []string{"locate", "--nodes", "a", "--vnodes", "0"}, "", 2, "at least 1"},
		{"zero replicas", []string{"locate", "--nodes", "a", "--replicas", "0"}, "", 2, "at least 1"},
		{"unknown hash", []string{"locate", "--nodes", "a", "--hash", "sha1"}, "", 2, "unknown hash"},
		{"unknown algo", []string{"locate", "--nodes", "a", "--algo", "magic"}, "", 2, "unknown --algo"},
		{"both node flags", []string{"locate", "--nodes", "a", "--nodes-file", bad}, "", 2, "exclude"},
		{"bad nodes file", []string{"locate", "--nodes-file", bad}, "", 1, "line 2"},
		{"missing nodes file", []string{"locate", "--nodes-file", filepath.Join(dir, "none")}, "", 1, "no such file"},
		{"duplicate node", []string{"locate", "--nodes", "a,a"}, "", 2, "duplicate node"},
		{"unknown removal", []string{"locate", "--nodes", "a", "--remove", "b"}, "", 2, "unknown node"},
		{"huge replica count", []string{"locate", "--nodes", "a", "--replicas", "100000000000000000"}, "", 2, "at most 1 distinct owner,"},
		{"unknown sim experiment", []string{"sim", "bogus"}, "", 2, "unknown command"},
		{"compat flag with a kolco algorithm", []string{"locate", "--nodes", "a", "--config", "x"}, "", 2, "does not apply"},
		{"everything removed", []string{"locate", "--nodes", "a", "--remove", "a"}, "k\n", 2, "every node"},
		{"key line too long", []string{"locate", "--nodes", "a"}, strings.Repeat("k", 2<<20), 1, "longer than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runCLI(t, c.stdin, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, c.code, errs)
			}
			if c.code == 0 {
				return
			}
			if strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "kolco: ") || !strings.Contains(errs, c.msg) {
				t.Errorf("stderr %q: want one line naming %q", errs, c.msg)
			}
		})
	}
}

func TestSimArticleTextAndJSONAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("reruns the article's measurements")
	}
	code, text, errs := runCLI(t, "", "sim", "article")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	code, js, errs := runCLI(t, "", "sim", "article", "--json")
	if code != 0 {
		t.Fatalf("--json exit %d: %s", code, errs)
	}
	var a article.Figures
	if err := json.Unmarshal([]byte(js), &a); err != nil {
		t.Fatal(err)
	}
	var fromJSON bytes.Buffer
	if err := a.WriteText(&fromJSON); err != nil {
		t.Fatal(err)
	}
	if fromJSON.String() != text {
		t.Errorf("the JSON document renders to\n%s\nbut the text output is\n%s", fromJSON.String(), text)
	}
	for _, want := range []string{" 10 -> 11  moved 90.87%", "   100  7.71%  100%      10", "rendezvous, 200000 keys, 10 -> 11 nodes: moved 9.11%"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q", want)
		}
	}
}

func TestLocateEveryAlgorithm(t *testing.T) {
	for _, name := range algo.Names() {
		t.Run(name, func(t *testing.T) {
			code, out, errs := runCLI(t, "k1\nk2\nk3\n", "locate", "--algo", name, "--nodes", "a,b,c", "--add", "d", "--remove", "a", "--replicas", "2")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != 3 {
				t.Fatalf("%d output lines for 3 keys: %q", len(lines), out)
			}
			for _, line := range lines {
				f := strings.Split(line, "\t")
				if len(f) != 3 || f[1] == f[2] || !strings.Contains("bcd", f[1]) || !strings.Contains("bcd", f[2]) {
					t.Errorf("line %q: want two distinct owners among b, c, d", line)
				}
			}
		})
	}
}
