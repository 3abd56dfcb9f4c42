package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanToNodeSets: --to takes kolco's own node sets after the change,
// as a list or a node file like the nodes before; a history of a canary
// added to a ring and removed again sends every key it took back to its
// old node, as the moves file marks, and plans each step as --add and
// --remove would.
func TestPlanToNodeSets(t *testing.T) {
	dir := t.TempDir()
	three, four := filepath.Join(dir, "three.txt"), filepath.Join(dir, "four.txt")
	os.WriteFile(three, []byte("a\nb 2\nc\n"), 0o644)
	os.WriteFile(four, []byte("a\nb 2\nc\ncanary\n"), 0o644)
	moves := filepath.Join(dir, "moves.tsv")
	code, out, errs := runCLI(t, "", "plan", "--nodes-file", three, "--to", four, "--to", three, "--keys", "5000", "--moves", moves, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var h struct {
		Steps []struct {
			Step     int `json:"step"`
			Moved    int `json:"moved_keys"`
			Returned int `json:"returned_keys"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil || len(h.Steps) != 2 {
		t.Fatalf("%v, %d steps", err, len(h.Steps))
	}
	add, back := h.Steps[0], h.Steps[1]
	if add.Moved == 0 || back.Moved != add.Moved || back.Returned != back.Moved || add.Returned != 0 {
		t.Errorf("canary in and out: %+v, %+v; want every key it took back, to a stale copy", add, back)
	}
	lines := readMoves(t, moves)
	stale := 0
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 5 || (f[3] == "1") != (f[2] == "canary") || (f[3] == "2") != (f[1] == "canary") {
			t.Fatalf("moves line %q: the canary takes keys at step 1 and gives them back at step 2", l)
		}
		if f[4] == "stale" {
			stale++
		}
	}
	if len(lines) != 2*add.Moved || stale != back.Returned {
		t.Errorf("%d moves lines, %d stale; want %d and %d", len(lines), stale, 2*add.Moved, back.Returned)
	}

	// One --to as a list is the change --add makes.
	for _, algo := range []string{"jump", "anchor", "maglev"} {
		withTo := runPlan(t, "--algo", algo, "--nodes", "a,b,c", "--to", "a,b,c,d", "--keys", "3000")
		withAdd := runPlan(t, "--algo", algo, "--nodes", "a,b,c", "--add", "d", "--keys", "3000")
		if withTo.MovedShare != withAdd.MovedShare || withTo.MovedShare == 0 {
			t.Errorf("%s: --to moves %v, --add %v", algo, withTo.MovedShare, withAdd.MovedShare)
		}
	}
}

// TestPlanMovesToStdout: --moves - writes one line per moved key, key,
// donor and receiver, in place of the report; the count is the plan's.
func TestPlanMovesToStdout(t *testing.T) {
	args := []string{"plan", "--algo", "modulo", "--nodes", "a,b,c", "--add", "d", "--keys", "2000"}
	code, out, errs := runCLI(t, "", append(args, "--moves", "-")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	p := runPlan(t, args[1:]...)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if math.Abs(float64(len(lines))/2000-p.MovedShare) > 1e-12 {
		t.Errorf("%d lines for a moved share of %v", len(lines), p.MovedShare)
	}
	for _, l := range lines {
		if f := strings.Split(l, "\t"); len(f) != 3 || !strings.HasPrefix(f[0], "key:") || f[1] == f[2] {
			t.Fatalf("line %q: want KEY<TAB>FROM<TAB>TO", l)
		}
	}
}

// TestPlanWarm: added nodes leave every previous owner answering, so the
// warm database rate is the steady one; with the removed node down, its
// keys miss warm as cold. A node is named for --down by its name in the
// system's description or by the address the plan calls it.
func TestPlanWarm(t *testing.T) {
	type warm struct {
		Cache struct {
			SteadyDB float64 `json:"steady_db_rps"`
			DB       float64 `json:"db_rps_after"`
			Warm     struct {
				Fallback float64 `json:"fallback_share"`
				DB       float64 `json:"db_rps_after"`
			} `json:"warm"`
		} `json:"cache"`
	}
	run := func(args ...string) warm {
		t.Helper()
		code, out, errs := runCLI(t, "", append([]string{"plan", "--json", "--keys", "5000", "--rps", "1000", "--hit-rate", "0.9", "--warm"}, args...)...)
		var w warm
		if code != 0 || json.Unmarshal([]byte(out), &w) != nil {
			t.Fatalf("exit %d: %s", code, errs)
		}
		return w
	}
	add := run("--nodes", "a,b,c", "--add", "d")
	if add.Cache.Warm.DB != add.Cache.SteadyDB || add.Cache.Warm.Fallback == 0 || add.Cache.DB <= add.Cache.SteadyDB {
		t.Errorf("add: %+v; want the steady rate warm", add.Cache)
	}
	down := run("--nodes", "a,b,c,d", "--remove", "d", "--down", "d")
	if math.Abs(down.Cache.Warm.DB-down.Cache.DB) > 1e-9 || down.Cache.Warm.Fallback != 0 {
		t.Errorf("removal of a down node: %+v; want the cold rate warm", down.Cache)
	}
	servers := []string{"--algo", "twemproxy", "--servers", "10.0.0.1:11211:1 a,10.0.0.2:11211:1 b", "--to", "10.0.0.1:11211:1 a"}
	byName, byAddr := run(append(servers, "--down", "b")...), run(append(servers, "--down", "10.0.0.2:11211")...)
	if byName != byAddr || byName.Cache.Warm.DB != byName.Cache.DB {
		t.Errorf("--down b: %+v; --down 10.0.0.2:11211: %+v; want both the cold rate", byName.Cache, byAddr.Cache)
	}
}

// TestPlanRefusesFlagsThatDoNotFit: each combination of flags that would
// be ignored or contradicts another is a usage error naming the flags.
func TestPlanRefusesFlagsThatDoNotFit(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys.txt")
	os.WriteFile(keys, []byte("k1\nk2\n"), 0o644)
	tw := []string{"--algo", "twemproxy", "--servers", "h:1:1 a,h:2:1 b"}
	for _, c := range []struct {
		name string
		args []string
		msg  string
	}{
		{"compat without --to", tw, "give the one after with --to"},
		{"compat reweight", append(tw, "--to", "h:1:1 a", "--reweight", "a=2"), "--reweight does not apply"},
		{"compat add", append(tw, "--to", "h:1:1 a", "--add", "c"), "--add does not apply"},
		{"to and add", []string{"--nodes", "a,b", "--to", "a,b,c", "--add", "c"}, "exclude each other"},
		{"duplicate in --to", []string{"--nodes", "a,b", "--to", "a,a"}, "duplicate node ID"},
		{"no change", []string{"--nodes", "a,b"}, "no change"},
		{"warm without rps", []string{"--nodes", "a,b", "--add", "c", "--warm"}, "--warm needs --rps"},
		{"down without warm", []string{"--nodes", "a,b", "--add", "c", "--rps", "10", "--down", "a"}, "--down needs --warm"},
		{"unknown down node", []string{"--nodes", "a,b", "--add", "c", "--rps", "10", "--warm", "--down", "x"}, `--down "x" names no node`},
		{"two key sources", []string{"--nodes", "a,b", "--add", "c", "--keys-file", keys, "--keys", "5"}, "exclude each other"},
		{"keys from both", []string{"--nodes", "a,b", "--add", "c", "--keys-from", "h:1", "--keys-from-servers"}, "exclude each other"},
		{"size with a key file", []string{"--nodes", "a,b", "--add", "c", "--keys-file", keys, "--size", "1KB"}, "--size shapes the synthetic sample"},
		{"plot of a history", []string{"--nodes", "a,b", "--to", "a,b,c", "--to", "a,b", "--plot", "x.svg"}, "--plot draws one change"},
		{"redis-db without redis", []string{"--nodes", "a,b", "--add", "c", "--redis-db", "2"}, "--redis-db needs --redis"},
		{"negative redis-db", []string{"--nodes", "a,b", "--add", "c", "--redis", "--redis-db", "-1"}, "--redis-db must be >= 0"},
		{"negative move rate", []string{"--nodes", "a,b", "--add", "c", "--move-rate", "-5"}, "--move-rate must be a finite number"},
		{"infinite move rate", []string{"--nodes", "a,b", "--add", "c", "--move-rate", "+Inf"}, "--move-rate must be a finite number"},
		{"moves on stdout and json", []string{"--nodes", "a,b", "--add", "c", "--moves", "-", "--json"}, "excludes --json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", append([]string{"plan"}, c.args...)...)
			if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.msg) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line naming %q", code, out, errs, c.msg)
			}
		})
	}
}
