package proxy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// reloadRetryYAML is a pool of a ring on the servers given, every server
// exclusive: one a reload adds is emptied before it takes keys, and the
// reload fails while it cannot be reached.
func reloadRetryYAML(servers ...string) string {
	y := "p:\n  listen: 127.0.0.1:0\n  distribution: ring\n  timeout: 1000\n  sweep: {exclusive: [\"*\"]}\n  servers:\n"
	for i, addr := range servers {
		y += fmt.Sprintf("   - %s:1 n%d\n", addr, i)
	}
	return y
}

// startRetryProxy starts a proxy on m0 from a file, and writes the file
// again adding a server on port, nothing listening there yet; it returns
// the proxy and the file's path.
func startRetryProxy(t *testing.T) (s *Server, path string, m0 *memcached, port int) {
	t.Helper()
	m0 = startMemcached(t, 0)
	port = freePort(t)
	path = filepath.Join(t.TempDir(), "kolco.yml")
	if err := os.WriteFile(path, []byte(reloadRetryYAML(m0.addr)), 0o600); err != nil {
		t.Fatal(err)
	}
	s = startProxy(t, reloadRetryYAML(m0.addr))
	if err := os.WriteFile(path, []byte(reloadRetryYAML(m0.addr, fmt.Sprintf("127.0.0.1:%d", port))), 0o600); err != nil {
		t.Fatal(err)
	}
	return s, path, m0, port
}

// TestFailedReloadTriedAgain: a reload that adds a server marked
// exclusive while that server cannot be reached fails - the server cannot
// be emptied - and is tried again by itself, so that the proxy applies
// the file once the server is up, without a second reload. Before, it
// served the old servers until the next SIGHUP (a fault schedule's seeds
// 237 and 252, memcached: a server added while it was briefly down; the
// file said one thing and the proxy served another for good).
func TestFailedReloadTriedAgain(t *testing.T) {
	s, path, _, port := startRetryProxy(t)
	var ce *ConfigError
	if err := s.ReloadFile(context.Background(), path); err == nil || errors.As(err, &ce) {
		t.Fatalf("a reload adding an exclusive server that cannot be reached: %v, want a failure that may pass", err)
	}
	if n := liveCount(s); n != 1 {
		t.Fatalf("after the failed reload the pool serves %d servers, want its one", n)
	}
	startMemcached(t, port) // the added server can be emptied now
	deadline := time.Now().Add(realprog.Patience)
	for liveCount(s) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%v after the added server came up, the pool serves %d servers, want 2: the failed reload was not tried again",
				realprog.Patience, liveCount(s))
		}
		time.Sleep(20 * time.Millisecond) // polling the pool's servers
	}
	if v := metricValue(t, s, "kolco_proxy_reload_pending", ""); v != 0 {
		t.Errorf("kolco_proxy_reload_pending = %v once applied, want 0", v)
	}
	if v := metricValue(t, s, "kolco_proxy_reload_failures_total", ""); v < 1 {
		t.Errorf("kolco_proxy_reload_failures_total = %v, want the failure counted", v)
	}
}

// TestFailedReloadRetryPending: a failed reload to be tried again shows
// in kolco_proxy_reload_pending; a configuration that does not validate
// is not tried again, and a newer reload, failed or applied, supersedes
// the pending one.
func TestFailedReloadRetryPending(t *testing.T) {
	s, path, m0, port := startRetryProxy(t)
	write := func(name, yaml string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Adds the unreachable server too, but does not validate.
	bad := write("bad.yml", reloadRetryYAML(m0.addr, fmt.Sprintf("127.0.0.1:%d", port))+"  hash: nosuch\n")
	good := write("good.yml", reloadRetryYAML(m0.addr))
	pending := func(when string, want float64) {
		t.Helper()
		if v := metricValue(t, s, "kolco_proxy_reload_pending", ""); v != want {
			t.Fatalf("kolco_proxy_reload_pending = %v %s, want %v", v, when, want)
		}
	}
	reload := func(path string, configError bool) {
		t.Helper()
		var ce *ConfigError
		if err := s.ReloadFile(context.Background(), path); err == nil || errors.As(err, &ce) != configError {
			t.Fatalf("reload of %s: %v, want a failure (a *ConfigError: %v)", filepath.Base(path), err, configError)
		}
	}
	reload(bad, true)
	pending("after a configuration error", 0)
	reload(path, false)
	pending("after a failure that may pass", 1)
	reload(bad, true)
	pending("after a configuration error superseded the pending reload", 0)
	reload(path, false)
	pending("after a failure that may pass", 1)
	if err := s.ReloadFile(context.Background(), good); err != nil {
		t.Fatal(err)
	}
	pending("after a newer reload applied", 0)
}

// TestFailedStartChangeTriedAgain: a start whose state file records other
// servers than the configuration serves those and applies the
// configuration's as a change; when that change fails for a reason that
// may pass - it adds an exclusive server that cannot be reached yet - it
// is tried again as a failed reload is, and applied once the server is up.
func TestFailedStartChangeTriedAgain(t *testing.T) {
	m0 := startMemcached(t, 0)
	port := freePort(t)
	lines := []string{m0.addr + ":1 m0", fmt.Sprintf("127.0.0.1:%d:1 m1", port)}
	dir := t.TempDir()
	pool := "  distribution: jump\n  sweep: {exclusive: [\"*\"]}\n"
	shutdown(startProxy(t, editedYAML(dir, pool, lines, 0)))
	s, logs := startEdited(t, editedYAML(dir, pool, lines, 0, 1))
	checkEditLogged(t, logs)
	if got := servedIDs(s); got != "[m0]" {
		t.Fatalf("with m1 out of reach the pool serves %s, want the recorded [m0]", got)
	}
	startMemcached(t, port)
	deadline := time.Now().Add(realprog.Patience)
	for servedIDs(s) != "[m0 m1]" {
		if time.Now().After(deadline) {
			t.Fatalf("%v after m1 came up, the pool serves %s, want [m0 m1]: the start's change was not tried again", realprog.Patience, servedIDs(s))
		}
		time.Sleep(20 * time.Millisecond) // polling the pool's servers
	}
}
