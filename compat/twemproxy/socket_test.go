package twemproxy_test

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// TestNutcrackerNamingRules checks the ring names nutcracker derives without
// a name field, against the real program: a memcached on a unix socket
// ("/path:weight", hashed as "/path:") and, when 127.0.0.1:11211 is free, a
// memcached on the default port (hashed as the host alone).
func TestNutcrackerNamingRules(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	mc := lookPathOrSkip(t, "memcached", "memcached")
	nc := lookPathOrSkip(t, "nutcracker", "nutcracker")
	// As root memcached drops to nobody before creating the socket, so the
	// socket's directory must be reachable by nobody: not under t.TempDir.
	dir, err := os.MkdirTemp("", "kolco-mc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "mc.sock")
	args := []string{"-s", sock, "-U", "0", "-m", "64"}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "nobody")
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	startOn(t, "unix", sock, mc, args...)
	type backend struct {
		server          twemproxy.Server
		network, target string
	}
	backends := []backend{{twemproxy.Server{Host: sock, Weight: 1}, "unix", sock}}
	if l, err := net.Listen("tcp", "127.0.0.1:11211"); err == nil {
		l.Close()
		start(t, 11211, mc, memcachedArgs(11211)...)
		backends = append(backends, backend{twemproxy.Server{Host: "127.0.0.1", Port: 11211, Weight: 1}, "tcp", "127.0.0.1:11211"})
	} else {
		t.Log("127.0.0.1:11211 is busy: the 11211 rule is checked by the unit tests only")
	}
	for i := 0; i < 2; i++ {
		p := freePort(t)
		start(t, p, mc, memcachedArgs(p)...)
		backends = append(backends, backend{twemproxy.Server{Host: "127.0.0.1", Port: p, Weight: i + 1}, "tcp", "127.0.0.1:" + strconv.Itoa(p)})
	}
	servers := make([]twemproxy.Server, len(backends))
	lines := make([]string, len(backends))
	for i, b := range backends {
		servers[i], lines[i] = b.server, b.server.String()
	}
	for ci, cfg := range []twemproxy.Config{{}, {Distribution: "modula", Hash: "md5"}, {Hash: "murmur"}} {
		keys := memcacheKeys(uint64(100+ci), 2000, false)
		value := "n" + strconv.Itoa(ci)
		runNutcracker(t, nc, cfg, lines, keys, value)
		pool, err := twemproxy.New(cfg, servers)
		if err != nil {
			t.Fatal(err)
		}
		owner := make([]int, len(keys))
		for i := range owner {
			owner[i] = -1
		}
		for bi, b := range backends {
			found, err := dialMCOn(t, b.network, b.target).getAll(keys, value)
			if err != nil {
				t.Fatal(err)
			}
			for i, ok := range found {
				if ok {
					owner[i] = bi
				}
			}
		}
		mismatches := 0
		for i, k := range keys {
			if got := pool.Index(k); got != owner[i] {
				if mismatches++; mismatches <= 5 {
					t.Errorf("%+v: key %q on server %d, Index %d", cfg, k, owner[i], got)
				}
			}
		}
		if mismatches > 0 {
			t.Errorf("%+v: %d of %d keys mismatched (servers %q)", cfg, mismatches, len(keys), lines)
		}
	}
}
