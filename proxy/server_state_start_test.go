package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// editedYAML is a pool over the servers at the indexes given, with its
// state file in dir.
func editedYAML(dir, pool string, lines []string, idx ...int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kolco:\n  state_file: %s\np:\n  listen: 127.0.0.1:0\n  timeout: 2000\n%s  servers:\n", filepath.Join(dir, "state.json"), pool)
	for _, i := range idx {
		fmt.Fprintf(&b, "   - %s\n", lines[i])
	}
	return b.String()
}

// startEdited starts a proxy on yaml, a configuration edited while no
// proxy ran, and fails the test if the start is refused; it returns the
// server and its log.
func startEdited(t *testing.T, yaml string) (*Server, *logBuffer) {
	t.Helper()
	cfg, err := ParseConfig([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	s := New(cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err := s.Start(); err != nil {
		t.Fatalf("the start on a configuration edited while the proxy was down was refused: %v", err)
	}
	t.Cleanup(func() { shutdown(s) })
	return s, logs
}

// checkEditLogged checks that the start said it serves the recorded
// servers and applies the configuration's as a change.
func checkEditLogged(t *testing.T, logs *logBuffer) {
	t.Helper()
	recs := logs.lines(t, "the state file records the pool over other servers than the configuration: serving those, which hold its keys, and applying the configuration's as a change")
	if len(recs) != 1 || recs[0]["level"] != "WARN" || recs[0]["recorded"] == recs[0]["configured"] {
		t.Errorf("the start logged %v about the difference, want one WARN naming both server lists", recs)
	}
}

// TestStoreStartsOnAnEditedConfiguration: a store stopped (as kill -9
// stops it: a SIGHUP sent, and overtaken) and started again on a
// configuration that removes r1 and adds r3 moves its keys, as the reload
// it missed would have, and reads every key. The fault schedule's seed 358
// (a Redis store, jumpback, three proxies; a proxy killed just after a
// membership change rewrote its configuration) found the start refused:
// the state file recorded other servers than the configuration. With a
// distribution that keeps no history (ring, ketama) the start succeeded
// and read nil for keys whose owner changed: nothing recorded which
// servers held them, and nothing moved them.
func TestStoreStartsOnAnEditedConfiguration(t *testing.T) {
	t.Parallel()
	for _, dist := range []string{"jumpback", "ring", "ketama"} {
		t.Run(dist, func(t *testing.T) {
			t.Parallel()
			var lines []string
			for i := range 4 {
				lines = append(lines, fmt.Sprintf("%s:1 r%d", startRedis(t, 0).addr, i))
			}
			dir := t.TempDir()
			pool := "  redis: true\n  distribution: " + dist + "\n  store: {enabled: true}\n"
			s := startProxy(t, editedYAML(dir, pool, lines, 0, 1, 2))
			c := dialRedis(t, s.Addr("p").String())
			const n = 300
			for i := range n {
				if got := c.do("SET", fmt.Sprintf("k:%d", i), fmt.Sprint("v", i)); got != "+OK\r\n" {
					t.Fatalf("SET: %q", got)
				}
			}
			if err := s.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			s, logs := startEdited(t, editedYAML(dir, pool, lines, 0, 2, 3))
			checkEditLogged(t, logs)
			c = dialRedis(t, s.Addr("p").String())
			lost := 0
			for i := range n {
				if got := c.do("GET", fmt.Sprintf("k:%d", i)); !strings.HasSuffix(got, fmt.Sprint("v", i, "\r\n")) {
					lost++
				}
			}
			if lost > 0 {
				t.Errorf("%d of %d keys read nil or other values after the start on the edited configuration", lost, n)
			}
			if got := servedIDs(s); got != "[r0 r2 r3]" {
				t.Errorf("the pool serves %s, want the configuration's [r0 r2 r3]", got)
			}
		})
	}
}

// TestCacheStartsOnAnEditedConfiguration: a memcached pool of a
// history-dependent distribution, started again on a configuration that
// removes m1 and adds m3, serves, and reads every key through its warm
// change from the servers that hold them. The fault schedule's seeds 237
// and 252 (memcached, three proxies) found a handover's new process
// refused: the configuration had been rewritten by a membership change
// the old process had yet to apply, and its state file recorded other
// servers.
func TestCacheStartsOnAnEditedConfiguration(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := range 4 {
		lines = append(lines, fmt.Sprintf("%s:1 m%d", startMemcached(t, 0).addr, i))
	}
	dir := t.TempDir()
	pool := "  distribution: jump\n"
	s := startProxy(t, editedYAML(dir, pool, lines, 0, 1, 2))
	keys := testKeys("edited", 300)
	value := func(k string) string { return k + "=v" }
	setAll(t, s.Addr("p").String(), keys, value)
	shutdown(s)
	s, logs := startEdited(t, editedYAML(dir, pool, lines, 0, 2, 3))
	checkEditLogged(t, logs)
	got := getAll(t, s.Addr("p").String(), keys)
	missed := 0
	for _, k := range keys {
		if got[k] != value(k) {
			missed++
		}
	}
	if missed > 0 {
		t.Errorf("%d of %d keys missed after the start on the edited configuration", missed, len(keys))
	}
	if got := servedIDs(s); got != "[m0 m2 m3]" {
		t.Errorf("the pool serves %s, want the configuration's [m0 m2 m3]", got)
	}
}

// servedIDs returns the IDs of the servers the pool p of s places keys
// over, sorted.
func servedIDs(s *Server) string {
	ids := nodeIDs(nodesOf(s.testPool("p").place.Load().servers))
	slices.Sort(ids)
	return fmt.Sprint(ids)
}
