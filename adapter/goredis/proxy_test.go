package goredis_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/goredis"
	"github.com/kolco-dev/kolco/adapter/internal/servertest"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/proxy"
)

// taggedKeys returns n keys, a third of them with a hash tag shared with
// other keys, some with braces the tag rule leaves whole or cuts short.
func taggedKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		switch i % 6 {
		case 0:
			keys[i] = fmt.Sprintf("user:{%d}:field%d", i%97, i)
		case 1:
			keys[i] = fmt.Sprintf("plain:%d", i)
		case 2:
			keys[i] = fmt.Sprintf("empty{}tag:%d", i)
		case 3:
			keys[i] = fmt.Sprintf("x}{a{%d}}:%d", i%89, i) // the tag is "a{N"
		case 4:
			keys[i] = fmt.Sprintf("open{only:%d", i)
		default:
			keys[i] = fmt.Sprintf("k%d", i*7919)
		}
	}
	return keys
}

// serverName is the name of server i in a pool: the third is unnamed, so
// that its address is its shard's name, as kolco proxy names it.
func serverName(i int) string { return [...]string{" shard-a", " shard-b", ""}[i%3] }

// redisPoolYAML is a kolco proxy configuration of one Redis pool p over
// servers; weights are i+1 but for jump, which has none.
func redisPoolYAML(settings string, servers []*servertest.Server) string {
	var b strings.Builder
	b.WriteString("p:\n  listen: 127.0.0.1:0\n  redis: true\n  hash_tag: \"{}\"\n  timeout: 10000\n")
	b.WriteString(settings)
	b.WriteString("  servers:\n")
	for i, s := range servers {
		fmt.Fprintf(&b, "   - %s:%d%s\n", s.Addr, poolWeight(settings, i), serverName(i))
	}
	return b.String()
}

func poolWeight(settings string, i int) int {
	if strings.Contains(settings, "jump") {
		return 1
	}
	return i + 1
}

func startRedisProxy(t *testing.T, yaml string) *proxy.Server {
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
// through a go-redis Ring placed by the adapter over real redis-servers
// and checks, for each distribution, that every key reads back through
// kolco proxy serving a Redis pool over the same servers, and that it sits
// on the server kolco locate and the adapter's hash name.
func TestAgreesWithProxyAndLocate(t *testing.T) {
	servers := []*servertest.Server{servertest.Redis(t), servertest.Redis(t), servertest.Redis(t)}
	keys := taggedKeys(10000)
	for _, c := range []struct{ dist, settings, hash string }{
		{"ring", "  distribution: ring\n", ""},
		{"jump", "  distribution: jump\n", ""},
		{"rendezvous", "  distribution: rendezvous\n", ""},
		{"maglev", "  distribution: maglev\n", ""},
		{"ketama", "  distribution: ketama\n", ""},
		{"ketama", "  distribution: ketama\n  hash: murmur\n", "murmur"},
		{"modula", "  distribution: modula\n  hash: md5\n", "md5"},
	} {
		t.Run(strings.TrimSuffix(c.dist+"-"+c.hash, "-"), func(t *testing.T) {
			flushAll(t, servers)
			yaml := redisPoolYAML(c.settings, servers)
			nodes, err := membership.ParseNutcracker([]byte(yaml), "p")
			if err != nil {
				t.Fatal(err)
			}
			cfg := shards.Config{Distribution: c.dist, Hash: c.hash, HashTag: "{}"}
			sh, err := goredis.New(cfg, nodes...)
			if err != nil {
				t.Fatal(err)
			}
			opt := sh.Options(&redis.RingOptions{HeartbeatFrequency: time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
			seen := watch(opt)
			rdb := redis.NewRing(opt)
			t.Cleanup(func() { rdb.Close() })
			var names []string
			for _, n := range nodes {
				names = append(names, n.ID)
			}
			hash := seen.waitLive(t, slices.Sorted(slices.Values(names))...)
			value := func(k string) string { return c.dist + c.hash + "=" + k }
			if _, err := rdb.Pipelined(context.Background(), func(p redis.Pipeliner) error {
				for _, k := range keys {
					p.Set(context.Background(), k, value(k), 0)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}

			px := startRedisProxy(t, yaml)
			viaProxy := getAll(t, px.Addr("p").String(), keys)
			for i, k := range keys {
				if viaProxy[i] != value(k) {
					t.Fatalf("%q read through kolco proxy: %q, want %q", k, viaProxy[i], value(k))
				}
			}

			owners := locateOwners(t, cfg, nodes, keys)
			for i, k := range keys {
				if got := hash.Get(shards.Tagged(k, [2]byte{'{', '}'})); got != owners[i] {
					t.Fatalf("%q: the adapter places it on %s, kolco locate on %s", k, got, owners[i])
				}
			}
			perServer := checkOnOwners(t, nodes, owners, keys, value)
			t.Logf("%d of %d keys read back through kolco proxy; %d on the server kolco locate names (per server %v)",
				len(keys), len(keys), len(keys), perServer)
		})
	}
}

func flushAll(t *testing.T, servers []*servertest.Server) {
	t.Helper()
	for _, s := range servers {
		c := redis.NewClient(&redis.Options{Addr: s.Addr})
		err := c.FlushAll(context.Background()).Err()
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// locateOwners returns the node ID kolco locate names for each key, with
// the pool's hash tag: kolco's algorithms are given the part of each key
// the tag rule hashes, twemproxy's the tag itself.
func locateOwners(t *testing.T, cfg shards.Config, nodes []kolco.Node, keys []string) []string {
	t.Helper()
	if cfg.Distribution == "ketama" || cfg.Distribution == "modula" {
		var lines []string
		for _, n := range nodes {
			name := n.ID
			if name == n.Addr {
				name = ""
			}
			lines = append(lines, strings.TrimSpace(fmt.Sprintf("%s:%v %s", n.Addr, n.EffectiveWeight(), name)))
		}
		args := []string{"--algo", "twemproxy", "--distribution", cfg.Distribution, "--hash-tag", "{}", "--servers", strings.Join(lines, ",")}
		if cfg.Hash != "" {
			args = append(args, "--hash", cfg.Hash)
		}
		return servertest.Locate(t, keys, args...)
	}
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
	return servertest.Locate(t, tagged, "--algo", cfg.Distribution, "--nodes-file", path)
}

// checkOnOwners checks that each key holds its value on the server of its
// owner, that every server holds some keys, and returns how many each
// holds.
func checkOnOwners(t *testing.T, nodes []kolco.Node, owners, keys []string, value func(string) string) map[string]int {
	t.Helper()
	addrOf := map[string]string{}
	for _, n := range nodes {
		addrOf[n.ID] = n.Addr
	}
	byServer := map[string][]string{}
	for i, k := range keys {
		byServer[addrOf[owners[i]]] = append(byServer[addrOf[owners[i]]], k)
	}
	if len(byServer) != len(nodes) {
		t.Fatalf("keys on %d servers, want all %d", len(byServer), len(nodes))
	}
	counts := map[string]int{}
	for addr, ks := range byServer {
		got := getAll(t, addr, ks)
		for i, k := range ks {
			if got[i] != value(k) {
				t.Fatalf("%q is not on %s, the server kolco locate names (%q there)", k, addr, got[i])
			}
		}
		counts[addr] = len(ks)
	}
	return counts
}

// getAll reads keys from the server at addr in pipelines of 1000 GETs and
// returns their values in order, "" for a missing key.
func getAll(t *testing.T, addr string, keys []string) []string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	defer c.Close()
	out := make([]string, 0, len(keys))
	for start := 0; start < len(keys); start += 1000 {
		cmds, err := c.Pipelined(context.Background(), func(p redis.Pipeliner) error {
			for _, k := range keys[start:min(start+1000, len(keys))] {
				p.Get(context.Background(), k)
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("pipelined GET from %s: %v", addr, err)
		}
		for _, cmd := range cmds {
			v, err := cmd.(*redis.StringCmd).Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				t.Fatalf("GET %v from %s: %v", cmd.Args(), addr, err)
			}
			out = append(out, v)
		}
	}
	return out
}
