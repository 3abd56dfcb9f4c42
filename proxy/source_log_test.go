package proxy

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadMembershipFileLogged: a membership file that stops parsing is
// logged at the default level as a warning, naming the file once and the
// line at fault (a tab's own line, not the one before), and its recovery
// too; the status reports the same error.
func TestBadMembershipFileLogged(t *testing.T) {
	m := startMemcached(t, 0)
	path := filepath.Join(t.TempDir(), "members.yml")
	good := "p:\n  servers:\n   - " + m.addr + ":1 a\n"
	if err := os.WriteFile(path, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig([]byte("kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  servers: [\"" + m.addr + ":1 a\"]\n" +
		"  membership: {file: {path: " + path + ", pool: p, interval: 20, settle: 40}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	s := New(cfg, slog.New(slog.NewTextHandler(&logs, nil))) // the default level
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	eventually(t, "the file served", func() bool {
		return membershipOf(t, s, "p").LastAnswer != nil && !membershipOf(t, s, "p").Stale
	})
	if err := os.WriteFile(path, []byte(good+"\t- "+m.addr+":1 b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the refusal logged", func() bool { return strings.Contains(logs.String(), "level=WARN") })
	line := ""
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "level=WARN") {
			line = l
		}
	}
	if strings.Count(line, path) != 1 || !strings.Contains(line, "line 4: indented with a tab") {
		t.Errorf("warning %q: want the path once and line 4", line)
	}
	if ms := membershipOf(t, s, "p"); !ms.Stale || strings.Count(ms.Error, path) != 1 || !strings.Contains(ms.Error, "line 4") {
		t.Errorf("status error %q: want stale, the path once, line 4", ms.Error)
	}
	if err := os.WriteFile(path, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the recovery logged", func() bool { return strings.Contains(logs.String(), "the source answers again") })
}
