package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const tenNodes = "node-0,node-1,node-2,node-3,node-4,node-5,node-6,node-7,node-8,node-9"

type planJSON struct {
	MovedShare  float64 `json:"moved_share"`
	TheoryShare float64 `json:"theory_share"`
	MovedBytes  float64 `json:"moved_bytes"`
	Cache       struct {
		SteadyDB  float64 `json:"steady_db_rps"`
		DB        float64 `json:"db_rps_after"`
		Factor    float64 `json:"factor"`
		TheoryDB  float64 `json:"theory_db_rps"`
		TheoryFac float64 `json:"theory_factor"`
	} `json:"cache"`
	Flows []struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"flows"`
}

func runPlan(t *testing.T, args ...string) planJSON {
	t.Helper()
	code, out, errs := runCLI(t, "", append([]string{"plan", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var p planJSON
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlanArticleCache: the article's cache, 100 000 RPS at 95% hits, 10 ->
// 11 nodes. The theory column (moved share N/(N+1) for modulo, 1/(N+1) for
// a ring) gives its 91 364 RPS (18.3x) and 13 636 RPS (2.7x). Measured on
// the sample: modulo within 5 binomial standard deviations of 100k keys
// (±0.5% of the database rate); a ring of 1000 vnodes on 200k keys within
// 10%, about 5 standard deviations of the new node's arc (3% of its share).
func TestPlanArticleCache(t *testing.T) {
	cache := []string{"--nodes", tenNodes, "--add", "node-10", "--rps", "100000", "--hit-rate", "0.95"}
	mod := runPlan(t, append(cache, "--algo", "modulo", "--keys", "100000")...)
	if math.Abs(mod.Cache.TheoryDB-91363.64) > 0.01 || math.Round(mod.Cache.TheoryFac*10) != 183 {
		t.Errorf("modulo theory: %.2f RPS, %.2fx; want 91363.64, 18.3x", mod.Cache.TheoryDB, mod.Cache.TheoryFac)
	}
	if math.Abs(mod.Cache.DB/91363.64-1) > 0.005 {
		t.Errorf("modulo measured: %.0f RPS, want 91364 ± 0.5%%", mod.Cache.DB)
	}
	ring := runPlan(t, append(cache, "--algo", "ring", "--vnodes", "1000", "--keys", "200000")...)
	if math.Abs(ring.Cache.TheoryDB-13636.36) > 0.01 || math.Round(ring.Cache.TheoryFac*10) != 27 {
		t.Errorf("ring theory: %.2f RPS, %.2fx; want 13636.36, 2.7x", ring.Cache.TheoryDB, ring.Cache.TheoryFac)
	}
	if math.Abs(ring.Cache.DB/13636.36-1) > 0.10 {
		t.Errorf("ring measured: %.0f RPS, want 13636 ± 10%%", ring.Cache.DB)
	}
	for _, f := range ring.Flows {
		if f.To != "node-10" {
			t.Errorf("ring flow %s -> %s: an added node only receives", f.From, f.To)
		}
	}
}

// TestPlanArticleStorage: 3 TB on 10 nodes, 10 -> 11: the theory column
// reads 2.7 TB for modulo and 272.7 GB, 27.3 GB per old node, for a ring.
func TestPlanArticleStorage(t *testing.T) {
	args := []string{"plan", "--nodes", tenNodes, "--add", "node-10", "--data", "3TB", "--keys", "50000"}
	for algo, want := range map[string][]string{
		"modulo": {"bytes moved", "2.7 TB", "bytes sent per old node", "272.7 GB"},
		"ring":   {"bytes moved", "272.7 GB", "bytes sent per old node", "27.3 GB"},
	} {
		t.Run(algo, func(t *testing.T) {
			code, out, errs := runCLI(t, "", append(args, "--algo", algo)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for i := 0; i < len(want); i += 2 {
				if !hasRow(out, want[i], want[i+1]) {
					t.Errorf("no %q row ending in theory %q:\n%s", want[i], want[i+1], out)
				}
			}
		})
	}
}

// hasRow reports whether a line starts (after spaces) with label and ends
// with value.
func hasRow(out, label, value string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), label) && strings.HasSuffix(strings.TrimSpace(l), value) {
			return true
		}
	}
	return false
}

func TestPlanKeysFileAndReweight(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.txt")
	var b strings.Builder
	b.WriteString("# key size rate\n")
	for i := range 2000 {
		b.WriteString("user:" + strings.Repeat("x", i%5) + string(rune('a'+i%26)) + "-" + strconv.Itoa(i) + " 2KB 1\n")
	}
	os.WriteFile(keys, []byte(b.String()), 0o644)
	p := runPlan(t, "--nodes", "a,b,c,d", "--reweight", "a=3", "--keys-file", keys, "--algo", "rendezvous")
	for _, f := range p.Flows {
		if f.To != "a" {
			t.Errorf("raising a's weight moved keys %s -> %s", f.From, f.To)
		}
	}
	if p.MovedShare <= 0 || math.Abs(p.MovedBytes-p.MovedShare*2000*2000) > 1e-6 {
		t.Errorf("moved %v of keys, %v bytes", p.MovedShare, p.MovedBytes)
	}
}

// TestPlanMalformedFiles: a bad key or node file gives one error line
// naming the line, exit 1, no output and no chart file.
func TestPlanMalformedFiles(t *testing.T) {
	dir := t.TempDir()
	badKeys := filepath.Join(dir, "keys.txt")
	os.WriteFile(badKeys, []byte("k1 10\nk2 20 1\n\nk3 big\n"), 0o644)
	badNodes := filepath.Join(dir, "nodes.txt")
	os.WriteFile(badNodes, []byte("a\nb 1 z1 extra\n"), 0o644)
	goodNodes := filepath.Join(dir, "good.txt")
	os.WriteFile(goodNodes, []byte("a\nb\n"), 0o644)
	plot := filepath.Join(dir, "plan.svg")
	for _, c := range []struct {
		name string
		args []string
		line string
	}{
		{"key file", []string{"--nodes-file", goodNodes, "--keys-file", badKeys}, "line 4"},
		{"node file", []string{"--nodes-file", badNodes, "--keys", "100"}, "line 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"plan", "--add", "c", "--plot", plot}, c.args...)
			code, out, errs := runCLI(t, "", args...)
			if code != 1 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.line) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1, one line naming %s", code, out, errs, c.line)
			}
			if _, err := os.Stat(plot); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a failed plan left the chart: %v", err)
			}
		})
	}
}

// TestChangeErrorsAlikeInLocateAndPlan: a change the placement refuses -
// an unknown node removed, a present one added, every node removed - is
// the command line's mistake: a usage error naming the flag and the node,
// exit 2 with one line, in locate and plan alike.
func TestChangeErrorsAlikeInLocateAndPlan(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		msg  []string
	}{
		{"unknown node removed", []string{"--remove", "x"}, []string{"kolco: --remove: ", `unknown node ID: "x"`}},
		{"present node added", []string{"--add", "a"}, []string{"kolco: --add: ", `duplicate node ID: "a"`}},
		{"every node removed", []string{"--remove", "a,b"}, []string{"takes away every node"}},
	} {
		for _, cmd := range [][]string{{"plan", "--keys", "10"}, {"locate"}} {
			t.Run(cmd[0]+"/"+c.name, func(t *testing.T) {
				args := append(append(cmd, "--nodes", "a,b"), c.args...)
				code, out, errs := runCLI(t, "k\n", args...)
				if code != 2 || out != "" || strings.Count(errs, "\n") != 1 {
					t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line", code, out, errs)
				}
				for _, m := range c.msg {
					if !strings.Contains(errs, m) {
						t.Errorf("stderr %q lacks %q", errs, m)
					}
				}
			})
		}
	}
}

func TestPlanPlotAndUsage(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{".svg", ".png"} {
		t.Run("plot"+ext, func(t *testing.T) {
			file := filepath.Join(dir, "load"+ext)
			code, _, errs := runCLI(t, "", "plan", "--nodes", "a,b,c", "--remove", "b", "--keys", "3000", "--plot", file)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			checkChartFile(t, file)
		})
	}
	for _, args := range [][]string{
		{"plan", "--nodes", "a,b"},
		{"plan", "--nodes", "a,b", "--reweight", "a"},
		{"plan", "--nodes", "a,b", "--add", "c", "--hit-rate", "1.5"},
		{"plan", "--nodes", "a,b", "--add", "c", "--data", "lots"},
		{"plan", "--nodes", "a,b", "--add", "c", "--size-dist", "normal"},
	} {
		name := strings.Join(args[3:], " ")
		if name == "" {
			name = "no change"
		}
		t.Run(name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", args...)
			if code != 2 || out != "" || strings.Count(errs, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line", code, out, errs)
			}
		})
	}
}

// TestPlanCSVHasPlainNumbers: --csv carries numbers a program can read:
// the theory's database rate of the article's modulo example.
func TestPlanCSVHasPlainNumbers(t *testing.T) {
	code, out, errs := runCLI(t, "", "plan", "--algo", "modulo", "--nodes", tenNodes, "--add", "node-10",
		"--rps", "100000", "--hit-rate", "0.95", "--keys", "2000", "--csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r := csv.NewReader(strings.NewReader(out))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, rec := range recs {
		if len(rec) == 4 && rec[1] == "database RPS, right after" {
			v, err := strconv.ParseFloat(rec[3], 64)
			found = err == nil && math.Abs(v-91363.636) < 0.01
		}
	}
	if !found {
		t.Errorf("no plain theory database rate 91363.636 in:\n%s", out)
	}
}
