package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func unixYAML(listen string, servers ...*memcached) string {
	var b strings.Builder
	// md5, not the default fnv1a_64, whose low 32 bits barely differ
	// between short keys such as k1 and k2: they would all land on one
	// server.
	fmt.Fprintf(&b, "p:\n  listen: %s\n  hash: md5\n  timeout: 10000\n  servers:\n", listen)
	for _, m := range servers {
		fmt.Fprintf(&b, "   - %s:1\n", m.addr)
	}
	return b.String()
}

func socketMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("%s is not a socket: %v", path, fi.Mode())
	}
	return fi.Mode().Perm()
}

// TestUnixSockets serves clients on a unix socket with the mode the config
// gives, in front of one memcached on a unix socket and one on TCP; a mode
// change on reload keeps the listener and its clients; shutdown removes the
// socket file.
func TestUnixSockets(t *testing.T) {
	ms := []*memcached{startMemcachedUnix(t), startMemcached(t, 0)}
	path := filepath.Join(t.TempDir(), "kolco.sock")
	s := startProxy(t, unixYAML(path+" 0640", ms...))
	if got := s.Addr("p").String(); got != path {
		t.Fatalf("listening on %q, want %q", got, path)
	}
	if m := socketMode(t, path); m != 0o640 {
		t.Fatalf("socket mode %o, want 640", m)
	}
	c := dial(t, path)
	for i := range 50 {
		if got := c.do(fmt.Sprintf("set k%d 0 0 1\r\n%d\r\n", i, i%10)); got != "STORED\r\n" {
			t.Fatalf("set k%d: %q", i, got)
		}
	}
	at := holders(t, ms, keysN(50))
	spread := map[int]int{}
	for _, a := range at {
		spread[a]++
	}
	if spread[0] == 0 || spread[1] == 0 || spread[-1]+spread[-2] != 0 {
		t.Fatalf("keys per server (-1 none, -2 several): %v", spread)
	}

	cfg, err := ParseConfig([]byte(unixYAML(path+" 0600", ms...)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if m := socketMode(t, path); m != 0o600 {
		t.Fatalf("after reload: socket mode %o, want 600", m)
	}
	if got := c.do("get k7\r\n"); got != "VALUE k7 0 1\r\n7\r\nEND\r\n" {
		t.Fatalf("client across the reload: %q", got)
	}
	if got := dial(t, path).do("get k8\r\n"); got != "VALUE k8 0 1\r\n8\r\nEND\r\n" {
		t.Fatalf("new client after the reload: %q", got)
	}

	// A reload that fails - here a new pool's socket path is taken by
	// another process - changes nothing, the mode included.
	taken := filepath.Join(t.TempDir(), "taken.sock")
	other, err := net.Listen("unix", taken)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	cfg, err = ParseConfig([]byte(unixYAML(path+" 0666", ms...) + strings.Replace(unixYAML(taken, ms...), "p:", "q:", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(context.Background(), cfg); !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("reload onto a taken path: %v", err)
	}
	if m := socketMode(t, path); m != 0o600 {
		t.Fatalf("after a failed reload: socket mode %o, want 600 still", m)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("socket file after shutdown: %v", err)
	}
}

func keysN(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
	}
	return keys
}

// TestUnixSocketPath replaces a socket file nobody listens on, as
// nutcracker does, and refuses a path another process listens on or that
// is not a socket, leaving it as it was.
func TestUnixSocketPath(t *testing.T) {
	m := startMemcached(t, 0)
	dir := t.TempDir()
	start := func(path string) error {
		cfg, err := ParseConfig([]byte(unixYAML(path, m)))
		if err != nil {
			t.Fatal(err)
		}
		s := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		err = s.Start()
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if got := dial(t, path).do("version\r\n"); !strings.HasPrefix(got, "VERSION") {
				t.Errorf("version on %s: %q", path, got)
			}
			_ = s.Shutdown(ctx)
		}
		return err
	}

	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close() // the file stays, with nobody listening
	if err := start(stale); err != nil {
		t.Fatalf("stale socket: %v", err)
	}

	live := filepath.Join(dir, "live.sock")
	other, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := start(live); !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("live socket: got %v", err)
	}
	if c, err := net.Dial("unix", live); err != nil {
		t.Fatalf("the other process's socket was disturbed: %v", err)
	} else {
		c.Close()
	}

	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := start(file); !errors.Is(err, ErrNotSocket) {
		t.Fatalf("regular file: got %v", err)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "keep me" {
		t.Fatalf("regular file changed: %q %v", b, err)
	}
}

// TestParseListen reads listen settings as nutcracker does: the mode, if
// any, after the last space, in octal; 0 means none.
func TestParseListen(t *testing.T) {
	for _, tc := range []struct {
		in, network, addr string
		mode              os.FileMode
		hasMode           bool
	}{
		{"127.0.0.1:22121", "tcp", "127.0.0.1:22121", 0, false},
		{"[::1]:22121", "tcp", "[::1]:22121", 0, false},
		{"/run/kolco.sock", "unix", "/run/kolco.sock", 0, false},
		{"/run/kolco.sock 0666", "unix", "/run/kolco.sock", 0o666, true},
		{"/run/kolco.sock 660", "unix", "/run/kolco.sock", 0o660, true},
		{"/run/kolco.sock   0600  ", "unix", "/run/kolco.sock", 0o600, true},
		{"/run/my dir/kolco.sock 0600", "unix", "/run/my dir/kolco.sock", 0o600, true},
		{"/run/kolco.sock 0", "unix", "/run/kolco.sock", 0, false},
	} {
		l, err := parseListen(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if l.network != tc.network || l.addr != tc.addr || l.mode != tc.mode || l.hasMode != tc.hasMode {
			t.Errorf("%q: got %+v", tc.in, l)
		}
	}
	for _, bad := range []string{"nowhere", "127.0.0.1:99999", "/run/kolco.sock 0999", "/run/kolco.sock 01000", "/run/kolco.sock rw", "/run/my dir"} {
		if _, err := parseListen(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
