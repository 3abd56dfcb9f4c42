package gomemcache_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/gomemcache"
	"github.com/kolco-dev/kolco/adapter/internal/servertest"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/proxy"
)

// testKeys returns n keys, every third one holding a hash tag shared with
// other keys, some of them with braces the tag rule leaves whole.
func testKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		switch i % 6 {
		case 0, 3:
			keys[i] = fmt.Sprintf("user:{%d}:field%d", i%97, i)
		case 1:
			keys[i] = fmt.Sprintf("plain:%d", i)
		case 2:
			keys[i] = fmt.Sprintf("empty{}tag:%d", i)
		case 4:
			keys[i] = fmt.Sprintf("open{only:%d", i)
		default:
			keys[i] = fmt.Sprintf("k%d", i*7919)
		}
	}
	return keys
}

// poolYAML is a kolco proxy configuration of one pool p over servers,
// the first two named and the third named by its address, as twemproxy
// and kolco proxy name an unnamed server.
func poolYAML(settings string, servers []*servertest.Server) string {
	var b strings.Builder
	b.WriteString("p:\n  listen: 127.0.0.1:0\n  hash_tag: \"{}\"\n  timeout: 10000\n")
	b.WriteString(settings)
	b.WriteString("  servers:\n")
	for i, s := range servers {
		name := [...]string{" cache-a", " cache-b", ""}[i%3]
		fmt.Fprintf(&b, "   - %s:%d%s\n", s.Addr, weight(settings, i), name)
	}
	return b.String()
}

// weight is the weight of server i: 1 for jump, which has no weights.
func weight(settings string, i int) int {
	if strings.Contains(settings, "jump") {
		return 1
	}
	return i + 1
}

func startProxy(t *testing.T, yaml string) *proxy.Server {
	t.Helper()
	cfg, err := proxy.ParseConfig([]byte(yaml))
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
		_ = s.Shutdown(ctx)
	})
	return s
}

// TestAgreesWithProxyAndLocate sets 10,000 keys (a third with hash tags)
// through the adapter over real memcached servers and checks, for each
// distribution, that every key reads back through kolco proxy configured
// with the same pool, and that it sits on the server kolco locate names.
func TestAgreesWithProxyAndLocate(t *testing.T) {
	servers := []*servertest.Server{servertest.Memcached(t), servertest.Memcached(t), servertest.Memcached(t)}
	keys := testKeys(10000)
	for _, c := range []struct {
		dist     string
		settings string
	}{
		{"ring", "  distribution: ring\n"},
		{"jump", "  distribution: jump\n"},
		{"ketama", "  distribution: ketama\n  hash: murmur\n"},
		{"modula", "  distribution: modula\n"},
	} {
		t.Run(c.dist, func(t *testing.T) {
			yaml := poolYAML(c.settings, servers)
			nodes, err := membership.ParseNutcracker([]byte(yaml), "p")
			if err != nil {
				t.Fatal(err)
			}
			cfg := shards.Config{Distribution: c.dist, HashTag: "{}"}
			if c.dist == "ketama" {
				cfg.Hash = "murmur"
			}
			sel, err := gomemcache.New(cfg, nodes...)
			if err != nil {
				t.Fatal(err)
			}
			app := memcache.NewFromSelector(sel)
			app.Timeout = 10 * time.Second // gomemcache's 500ms is short for a loaded test machine
			value := func(k string) string { return c.dist + "=" + k }
			for _, k := range keys {
				if err := app.Set(&memcache.Item{Key: k, Value: []byte(value(k))}); err != nil {
					t.Fatalf("set %q: %v", k, err)
				}
			}
			px := startProxy(t, yaml)
			read := getAll(t, memcache.New(px.Addr("p").String()), keys)
			for _, k := range keys {
				if read[k] != value(k) {
					t.Fatalf("%q read through kolco proxy: %q, want %q", k, read[k], value(k))
				}
			}
			checkOnLocated(t, c.dist, cfg, nodes, servers, keys, value)
		})
	}
}

// checkOnLocated checks that each key is held by the server kolco locate
// names for it.
func checkOnLocated(t *testing.T, dist string, cfg shards.Config, nodes []kolco.Node, servers []*servertest.Server, keys []string, value func(string) string) {
	t.Helper()
	var owners []string
	if dist == "ketama" || dist == "modula" {
		var lines []string
		for i, s := range servers {
			lines = append(lines, fmt.Sprintf("%s:%d%s", s.Addr, weight(dist, i), [...]string{" cache-a", " cache-b", ""}[i%3]))
		}
		args := []string{"--algo", "twemproxy", "--distribution", dist, "--hash-tag", "{}", "--servers", strings.Join(lines, ",")}
		if cfg.Hash != "" {
			args = append(args, "--hash", cfg.Hash)
		}
		owners = servertest.Locate(t, keys, args...)
	} else {
		// kolco locate has no hash tag for kolco's algorithms: it is
		// given the part of each key the tag rule hashes.
		tagged := make([]string, len(keys))
		for i, k := range keys {
			tagged[i] = shards.Tagged(k, [2]byte{'{', '}'})
		}
		var file strings.Builder
		for _, n := range nodes {
			fmt.Fprintf(&file, "%s %v\n", n.ID, n.EffectiveWeight())
		}
		path := filepath.Join(t.TempDir(), "nodes.txt")
		if err := os.WriteFile(path, []byte(file.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		owners = servertest.Locate(t, tagged, "--algo", dist, "--nodes-file", path)
	}
	addrOf := map[string]string{}
	for _, n := range nodes {
		addrOf[n.ID] = n.Addr
	}
	byServer := map[string][]string{}
	for i, k := range keys {
		byServer[addrOf[owners[i]]] = append(byServer[addrOf[owners[i]]], k)
	}
	if len(byServer) != len(servers) {
		t.Fatalf("keys on %d servers, want all %d", len(byServer), len(servers))
	}
	for addr, ks := range byServer {
		got := getAll(t, memcache.New(addr), ks)
		for _, k := range ks {
			if got[k] != value(k) {
				t.Fatalf("%q is not on %s, the server kolco locate names", k, addr)
			}
		}
	}
}

// getAll reads keys through c in batches and returns their values.
func getAll(t *testing.T, c *memcache.Client, keys []string) map[string]string {
	t.Helper()
	c.Timeout = 10 * time.Second
	out := make(map[string]string, len(keys))
	for start := 0; start < len(keys); start += 500 {
		items, err := c.GetMulti(keys[start:min(start+500, len(keys))])
		if err != nil {
			t.Fatal(err)
		}
		for k, it := range items {
			out[k] = string(it.Value)
		}
	}
	return out
}
