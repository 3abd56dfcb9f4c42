package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/proxy"
	"github.com/kolco-dev/kolco/proxy/memcache"
	"github.com/kolco-dev/kolco/sim/keys"
)

// move is one line of a history's --moves file.
type move struct {
	from, to string
	stale    bool
}

// TestPlanPredictsTheProxysMisses writes keys through a real kolco proxy
// over real memcached, plans a history of its nutcracker.yml - a fourth
// server added, removed again (a canary rolled back), then one of the
// first three removed - from the keys the servers hold, and then makes
// each change with a reload. After each one, reading every key through the
// proxy finds exactly what the plan said: the keys it lists as moving miss,
// except those it marks stale, which read back the value written before
// the last change from a copy left on their old server; every other key
// reads its last value. Each moved key lies on the server the plan moves
// it from, and after a rewrite on the one it moves it to. Every key is
// rewritten after each check, as clients refill a cache.
func TestPlanPredictsTheProxysMisses(t *testing.T) {
	mc := []string{startMemcached(t), startMemcached(t), startMemcached(t), startMemcached(t)}
	listen := realprog.RestartablePorts(t, 2) // below the ephemeral range: no outgoing connection takes them meanwhile
	dir := t.TempDir()
	conf := func(name string, servers ...string) string {
		y := fmt.Sprintf("alpha:\n  listen: 127.0.0.1:%d\n  hash: fnv1a_64\n  distribution: ketama\n  timeout: 10000\n  servers:\n", listen[0])
		for _, s := range servers {
			y += "   - " + s + "\n"
		}
		y += fmt.Sprintf("beta:\n  listen: 127.0.0.1:%d\n  servers:\n   - %s:1\n", listen[1], mc[3])
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, b, c, d := mc[0]+":1 a", mc[1]+":2 b", mc[2]+":1 c", mc[3]+":1 d"
	v1, v2, v3 := conf("v1.yml", a, b, c), conf("v2.yml", a, b, c, d), conf("v3.yml", a, c)
	s := startProxy(t, v1)
	pool := fmt.Sprintf("127.0.0.1:%d", listen[0])

	var keys []string
	for i := range 4000 {
		keys = append(keys, fmt.Sprintf("user:%d", i))
	}
	keys = append(keys, "100%+fresh", "{tag}:ключ", "a/b?c=d&e")
	writeAll(t, pool, keys, 0)

	movesFile := filepath.Join(dir, "moves.tsv")
	code, out, errs := runCLI(t, "", "plan", "--algo", "twemproxy", "--config", v1, "--pool", "alpha",
		"--to", v2, "--to", v1, "--to", v3, "--keys-from-servers", "--moves", movesFile, "--json")
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errs)
	}
	var h struct {
		Steps []struct {
			Keys     int `json:"keys"`
			Moved    int `json:"moved_keys"`
			Returned int `json:"returned_keys"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil || len(h.Steps) != 3 {
		t.Fatalf("plan JSON: %v, %d steps", err, len(h.Steps))
	}
	moves := readHistoryMoves(t, movesFile)
	for i, file := range []string{v2, v1, v3} {
		step := i + 1
		if h.Steps[i].Keys != len(keys) {
			t.Errorf("step %d: the plan read %d keys from the servers, %d were written", step, h.Steps[i].Keys, len(keys))
		}
		if err := s.ReloadFile(context.Background(), file); err != nil {
			t.Fatal(err)
		}
		got := readAll(t, pool, keys)
		misses, stale := 0, 0
		for _, k := range keys {
			m, moved := moves[step][k]
			v, hit := got[k]
			switch {
			case moved && m.stale && hit && v != strconv.Itoa(i):
				stale++
			case moved && !m.stale && !hit:
				misses++
			case !moved && hit && v == strconv.Itoa(i):
			default:
				t.Errorf("step %d: key %q: planned move %v %+v; read %q (hit %v), last written %d", step, k, moved, m, v, hit, i)
			}
		}
		t.Logf("step %d: %d keys planned to move, %d of them back to a stale copy; %d missed, %d read stale",
			step, h.Steps[i].Moved, h.Steps[i].Returned, misses, stale)
		checkEnds(t, step, moves[step], func() { writeAll(t, pool, keys, step) })
	}
}

// startProxy serves the configuration file path with a kolco proxy until
// the test ends.
func startProxy(t *testing.T, path string) *proxy.Server {
	t.Helper()
	cfg, err := proxy.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	s := proxy.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}

// checkEnds checks that each moved key lies on the server it moves from
// and, once rewrite has run, on the one it moves to.
func checkEnds(t *testing.T, step int, moves map[string]move, rewrite func()) {
	t.Helper()
	byServer := func(end func(move) string) map[string][]string {
		m := map[string][]string{}
		for k, mv := range moves {
			m[end(mv)] = append(m[end(mv)], k)
		}
		return m
	}
	from, to := byServer(func(m move) string { return m.from }), byServer(func(m move) string { return m.to })
	for addr, ks := range from {
		if got := readAll(t, addr, ks); len(got) != len(ks) {
			t.Errorf("step %d: %s, which the plan moves %d keys from, holds %d of them", step, addr, len(ks), len(got))
		}
	}
	rewrite()
	for addr, ks := range to {
		if got := readAll(t, addr, ks); len(got) != len(ks) {
			t.Errorf("step %d: %s, which the plan moves %d keys to, holds %d of them after a rewrite", step, addr, len(ks), len(got))
		}
	}
}

// readHistoryMoves reads a history's --moves file: step -> key -> move.
func readHistoryMoves(t *testing.T, path string) map[int]map[string]move {
	t.Helper()
	out := map[int]map[string]move{}
	for _, line := range readMoves(t, path) {
		f := strings.Split(line, "\t")
		step, err := strconv.Atoi(f[len(f)-2])
		if len(f) != 5 || err != nil || (f[4] != "stale" && f[4] != "-") {
			t.Fatalf("moves line %q", line)
		}
		if out[step] == nil {
			out[step] = map[string]move{}
		}
		out[step][f[0]] = move{from: f[1], to: f[2], stale: f[4] == "stale"}
	}
	return out
}

// writeAll sets every key to the value version through the memcached
// server or proxy at addr, pipelined on one connection.
func writeAll(t *testing.T, addr string, keys []string, version int) {
	t.Helper()
	c := dialMC(t, addr)
	v := strconv.Itoa(version)
	var req strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&req, "set %s 0 0 %d\r\n%s\r\n", k, len(v), v)
	}
	c.send(req.String())
	for _, k := range keys {
		if got := c.reply(memcache.CmdSet); got != "STORED\r\n" {
			t.Fatalf("set %s via %s: %q", k, addr, got)
		}
	}
}

// readAll gets every key through addr, pipelined on one connection, and
// returns the values of those found.
func readAll(t *testing.T, addr string, keys []string) map[string]string {
	t.Helper()
	c := dialMC(t, addr)
	var req strings.Builder
	for _, k := range keys {
		req.WriteString("get " + k + "\r\n")
	}
	c.send(req.String())
	got := map[string]string{}
	for _, k := range keys {
		r := c.reply(memcache.CmdGet)
		if r == "END\r\n" {
			continue
		}
		lines := strings.Split(r, "\r\n")
		if len(lines) != 4 || !strings.HasPrefix(lines[0], "VALUE "+k+" ") || lines[2] != "END" {
			t.Fatalf("get %s via %s: %q", k, addr, r)
		}
		got[k] = lines[1]
	}
	return got
}

// TestPlanKeysFromMemcached: --keys-from plans with the keys two real
// memcached servers hold, each once - with the size of its item on the
// first server listed that holds it, as that server's dump gives it; a
// server that does not answer is a runtime failure naming it.
func TestPlanKeysFromMemcached(t *testing.T) {
	x, y := startMemcached(t), startMemcached(t)
	var names []string
	for i := range 300 {
		names = append(names, fmt.Sprintf("k%d", i))
	}
	writeAll(t, x, names[:200], 12345)
	writeAll(t, y, names[100:], 7) // keys 100..199 on both
	code, out, errs := runCLI(t, "", "plan", "--nodes", "a,b", "--add", "c", "--keys-from", x+","+y, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var p struct {
		Keys  int     `json:"keys"`
		Bytes float64 `json:"total_bytes"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	want, seen := int64(0), map[string]bool{}
	for _, addr := range []string{x, y} {
		items, err := keys.Metadump(context.Background(), addr)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if !seen[it.Key] {
				seen[it.Key] = true
				want += it.Size
			}
		}
	}
	if p.Keys != 300 || p.Bytes != float64(want) {
		t.Errorf("%d keys, %v bytes; want 300 keys, %d bytes", p.Keys, p.Bytes, want)
	}
	dead := fmt.Sprintf("127.0.0.1:%d", realprog.FreePorts(t, 1)[0])
	code, _, errs = runCLI(t, "", "plan", "--nodes", "a,b", "--add", "c", "--keys-from", dead)
	if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, dead) {
		t.Errorf("a server that does not answer: exit %d, %q", code, errs)
	}
}
