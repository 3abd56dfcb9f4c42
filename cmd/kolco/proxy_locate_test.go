package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// TestProxyLocate asks a running proxy where keys live: each key is on the
// server "kolco proxy locate" names, the one a set through the proxy
// reached; "kolco proxy pools" lists the pool's servers.
func TestProxyLocate(t *testing.T) {
	a, b := startMemcached(t), startMemcached(t)
	path := filepath.Join(t.TempDir(), "nutcracker.yml")
	listen := fmt.Sprintf("127.0.0.1:%d", realprog.FreePorts(t, 1)[0])
	conf := fmt.Sprintf("kolco:\n  admin_listen: 127.0.0.1:0\np:\n  listen: %s\n  timeout: 10000\n  servers:\n   - %s:1 a\n   - %s:1 b\n", listen, a, b)
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	s := serveProxy(t, path, -1)
	c := dialMC(t, listen)
	keys := []string{"user:1", "user:2", "user:3", "user:4", "user:5", "user:6"}
	for _, k := range keys {
		if got := c.set(k); got != "STORED\r\n" {
			t.Fatalf("set %s: %q", k, got)
		}
	}
	var out, errOut bytes.Buffer
	args := append([]string{"proxy", "locate", "--proxy", s.AdminAddr().String()}, keys...)
	if code := run(args, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(keys) {
		t.Fatalf("output:\n%s", out.String())
	}
	servers := map[string]string{"a": a, "b": b}
	for i, line := range lines {
		key, name, _ := strings.Cut(line, "\t")
		if key != keys[i] || !holds(t, servers[name], key) {
			t.Errorf("line %q: the named server does not hold %s", line, keys[i])
		}
	}
	out.Reset()
	if code := run([]string{"proxy", "pools", "--proxy", s.AdminAddr().String()}, nil, &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), `"name": "a"`) || !strings.Contains(out.String(), `"up": true`) {
		t.Fatalf("pools: exit %d:\n%s%s", code, out.String(), errOut.String())
	}
	if code := run([]string{"proxy", "locate", "k"}, nil, &out, &errOut); code != 2 {
		t.Errorf("locate without --proxy: exit %d, want 2", code)
	}
}
