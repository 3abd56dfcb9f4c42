package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// logBuffer collects a server's JSON log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was logged so far.
func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lines returns the records logged so far whose message is msg.
func (b *logBuffer) lines(t testing.TB, msg string) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// startProxyLogged starts a Server for yaml whose logs, at debug level,
// go to the returned buffer; Cleanup shuts it down.
func startProxyLogged(t testing.TB, yaml string) (*Server, *logBuffer) {
	t.Helper()
	cfg, err := ParseConfig([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	s := New(cfg, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s, logs
}

// TestReloadLogsChanges: a reload logs each pool added and removed, and
// for a changed pool its servers added, removed, re-weighted and repointed
// by name, and the settings that changed.
func TestReloadLogsChanges(t *testing.T) {
	other := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	before := "p:\n  listen: 127.0.0.1:0\n  timeout: 100\n  servers:\n   - 127.0.0.1:1:1 a\n   - 127.0.0.1:2:1 b\n   - 127.0.0.1:3:1 c\n   - 127.0.0.1:4:1 d\n" +
		"gone:\n  listen: " + other + "\n  servers: [\"127.0.0.1:5:1\"]\n"
	after := "p:\n  listen: 127.0.0.1:0\n  timeout: 200\n  servers:\n   - 127.0.0.1:1:1 a\n   - 127.0.0.1:2:3 b\n   - 127.0.0.1:9:1 c\n   - 127.0.0.1:6:1 e\n" +
		"fresh:\n  listen: " + fmt.Sprintf("127.0.0.1:%d", freePort(t)) + "\n  servers: [\"127.0.0.1:5:1\"]\n"
	s, logs := startProxyLogged(t, before)
	if err := s.ReloadData(context.Background(), "test.yml", []byte(after)); err != nil {
		t.Fatal(err)
	}
	changed := logs.lines(t, "reload: pool changed")
	if len(changed) != 1 {
		t.Fatalf("%d pool changed lines, want 1", len(changed))
	}
	for key, want := range map[string]string{
		"pool": "p", "servers_added": "127.0.0.1:6:1 e", "servers_removed": "127.0.0.1:4:1 d",
		"reweighted": "b: 1 -> 3", "repointed": "c: 127.0.0.1:3 -> 127.0.0.1:9", "settings": "timeout, health_check", // its timeout follows timeout
	} {
		if got := changed[0][key]; got != want {
			t.Errorf("%s: %v, want %q", key, got, want)
		}
	}
	if l := logs.lines(t, "reload: pool added"); len(l) != 1 || l[0]["pool"] != "fresh" {
		t.Errorf("pool added lines: %v", l)
	}
	if l := logs.lines(t, "reload: pool removed"); len(l) != 1 || l[0]["pool"] != "gone" {
		t.Errorf("pool removed lines: %v", l)
	}
}

// TestLogsRefusedClients: clients refused over max_client_connections are
// logged, one line for a burst, saying how many it stands for.
func TestLogsRefusedClients(t *testing.T) {
	m := startMemcached(t, 0)
	s, logs := startProxyLogged(t, poolYAML("  max_client_connections: 1\n", m))
	dial(t, s.Addr("p").String()).do("get k\r\n")
	const refused = 5
	for range refused {
		c := dial(t, s.Addr("p").String())
		if got := c.reply(memcache.CmdVersion); got != "SERVER_ERROR too many open connections\r\n" {
			t.Fatalf("over the limit: %q", got)
		}
	}
	lines := logs.lines(t, "client refused: over max_client_connections")
	if len(lines) != 1 || lines[0]["pool"] != "p" || lines[0]["limit"] != 1.0 {
		t.Fatalf("refusal lines: %v", lines)
	}
	l := &s.testPool("p").refuseLog
	l.mu.Lock()
	got := l.dropped
	l.mu.Unlock()
	if got != refused-1 {
		t.Errorf("%d refusals held back for the next line, want %d", got, refused-1)
	}
}

// TestLogsServerFailures: a failing server is logged under every ejection
// policy, at most a line per logEvery however many requests fail.
func TestLogsServerFailures(t *testing.T) {
	for _, policy := range []string{"", "  ejection: fail-fast\n", "  auto_eject_hosts: true\n"} {
		s, logs := startProxyLogged(t, "p:\n  listen: 127.0.0.1:0\n"+policy+"  servers:\n   - "+refusedAddr(t)+":1 dead\n")
		c := dial(t, s.Addr("p").String())
		for i := range 20 {
			if got := c.do(fmt.Sprintf("get k%d\r\n", i)); !strings.HasPrefix(got, "SERVER_ERROR ") {
				t.Fatalf("get on a dead server: %q", got)
			}
		}
		l := logs.lines(t, "server failed")
		want := s.testPool("p").cfg.Ejection
		if len(l) != 1 || l[0]["server"] != "dead" || l[0]["policy"] != want {
			t.Errorf("ejection %s: server failed lines %v", want, l)
		}
	}
}

// TestLogsShutdown: a shutdown says it began and that it ended.
func TestLogsShutdown(t *testing.T) {
	s, logs := startProxyLogged(t, poolYAML("", startMemcached(t, 0)))
	dial(t, s.Addr("p").String()).do("get k\r\n")
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{"shutting down: listeners closed, answering the requests in flight", "shut down"} {
		if l := logs.lines(t, msg); len(l) != 1 {
			t.Errorf("%q logged %d times", msg, len(l))
		}
	}
}
