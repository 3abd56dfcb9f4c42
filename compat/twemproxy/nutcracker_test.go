package twemproxy_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// memcacheKeys returns n distinct keys memcached accepts (1..250 bytes, no
// space or control byte), a quarter of them with bytes >= 0x80, some at the
// 250-byte limit, some one byte long and, when tags is set, many with
// "{...}" hash tags, empty tags and stray braces.
func memcacheKeys(seed uint64, n int, tags bool) [][]byte {
	r := rand.New(rand.NewPCG(seed, 7))
	seen := map[string]bool{}
	var keys [][]byte
	randByte := func(high bool) byte {
		if high && r.IntN(2) == 0 {
			return byte(0x80 + r.IntN(0x80))
		}
		return byte(0x21 + r.IntN(0x7f-0x21))
	}
	for len(keys) < n {
		var l int
		switch r.IntN(10) {
		case 0:
			l = 250
		case 1:
			l = 1 + r.IntN(3)
		default:
			l = 1 + r.IntN(60)
		}
		high := r.IntN(4) == 0
		k := make([]byte, l)
		for i := range k {
			k[i] = randByte(high)
		}
		if tags && r.IntN(2) == 0 && l > 4 {
			a := r.IntN(l - 1)
			b := a + 1 + r.IntN(min(8, l-a-1))
			k[a], k[b] = '{', '}'
			if r.IntN(5) == 0 {
				k[a+1] = '}' // empty tag: hash the whole key
			}
		}
		if !seen[string(k)] {
			seen[string(k)] = true
			keys = append(keys, k)
		}
	}
	return keys
}

type ncCase struct {
	name    string
	cfg     twemproxy.Config
	weights []int
	names   []string // "" for no name
}

var ncCases = []ncCase{
	{"ketama/default/3", twemproxy.Config{}, []int{1, 1, 1}, nil},
	{"ketama/md5/weights", twemproxy.Config{Hash: "md5"}, []int{1, 2, 3, 5}, nil},
	{"ketama/murmur/names", twemproxy.Config{Hash: "murmur"}, []int{2, 1, 1, 4, 1}, []string{"zeta", "", "a", "mid", ""}},
	{"ketama/crc32a/tag", twemproxy.Config{Hash: "crc32a", HashTag: "{}"}, []int{1, 1, 2, 1}, nil},
	{"ketama/hsieh/names", twemproxy.Config{Hash: "hsieh"}, []int{1, 1, 1}, []string{"cache-b", "cache-a", "cache-c"}},
	{"ketama/one_at_a_time/weights", twemproxy.Config{Hash: "one_at_a_time"}, []int{3, 1, 1, 1, 2}, nil},
	{"ketama/crc16", twemproxy.Config{Hash: "crc16"}, []int{1, 1, 1}, nil},
	{"ketama/crc32", twemproxy.Config{Hash: "crc32"}, []int{1, 2, 1}, nil},
	{"ketama/jenkins", twemproxy.Config{Hash: "jenkins"}, []int{1, 1, 1, 1}, nil},
	{"ketama/fnv1_32", twemproxy.Config{Hash: "fnv1_32"}, []int{1, 1, 3}, nil},
	{"ketama/fnv1a_32/tag", twemproxy.Config{Hash: "fnv1a_32", HashTag: "{}"}, []int{1, 1}, nil},
	{"ketama/fnv1_64/25", twemproxy.Config{Hash: "fnv1_64"}, []int{1, 1, 1, 1, 1}, nil},
	{"modula/default/weights", twemproxy.Config{Distribution: "modula"}, []int{1, 2, 3}, nil},
	{"modula/md5/names", twemproxy.Config{Distribution: "modula", Hash: "md5"}, []int{1, 3, 1, 2}, []string{"zz", "b", "yyy", "a"}},
	{"modula/hsieh/tag", twemproxy.Config{Distribution: "modula", Hash: "hsieh", HashTag: "{}"}, []int{2, 1, 1, 1, 1}, nil},
	{"modula/murmur/ports", twemproxy.Config{Distribution: "modula", Hash: "murmur"}, []int{1, 1, 1, 1, 1}, nil},
}

// TestNutcracker runs memcached backends behind nutcracker for each case,
// stores keys through the proxy, asks every backend which keys it holds and
// compares with Pool.Index.
func TestNutcracker(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	mc := lookPathOrSkip(t, "memcached", "memcached")
	nc := lookPathOrSkip(t, "nutcracker", "nutcracker")
	ports := make([]int, 5)
	for i := range ports {
		ports[i] = freePort(t)
		start(t, ports[i], mc, memcachedArgs(ports[i])...)
	}
	total := 0
	for ci, c := range ncCases {
		t.Run(c.name, func(t *testing.T) {
			servers := make([]twemproxy.Server, len(c.weights))
			lines := make([]string, len(c.weights))
			for i, w := range c.weights {
				servers[i] = twemproxy.Server{Host: "127.0.0.1", Port: ports[i], Weight: w}
				if c.names != nil {
					servers[i].Name = c.names[i]
				}
				lines[i] = servers[i].String()
			}
			keys := memcacheKeys(uint64(ci), 2000, c.cfg.HashTag != "")
			runNutcracker(t, nc, c.cfg, lines, keys, "v"+strconv.Itoa(ci))
			pool, err := twemproxy.New(c.cfg, servers)
			if err != nil {
				t.Fatal(err)
			}
			compareBackends(t, pool, ports[:len(servers)], keys, "v"+strconv.Itoa(ci))
			total += len(keys)
		})
	}
	t.Logf("%d configurations, %d keys", len(ncCases), total)
}

// runNutcracker starts nutcracker on a memcached pool of the given server
// lines and stores every key through it.
func runNutcracker(t *testing.T, nc string, cfg twemproxy.Config, lines []string, keys [][]byte, value string) {
	t.Helper()
	listen := startNutcracker(t, nc, cfg, lines, "")
	if err := dialMC(t, listen).setAll(keys, value); err != nil {
		t.Fatalf("set through nutcracker: %v\n%s", err, strings.Join(lines, "\n"))
	}
}

// startNutcracker starts nutcracker on one pool and returns its port; extra
// is added to the pool's settings.
func startNutcracker(t *testing.T, nc string, cfg twemproxy.Config, lines []string, extra string) int {
	t.Helper()
	dir := t.TempDir()
	listen, stats := freePort(t), freePort(t)
	var y strings.Builder
	fmt.Fprintf(&y, "pool:\n  listen: 127.0.0.1:%d\n  timeout: 5000\n", listen)
	if !strings.Contains(extra, "auto_eject_hosts:") {
		y.WriteString("  auto_eject_hosts: false\n")
	}
	y.WriteString(extra)
	if cfg.Hash != "" {
		fmt.Fprintf(&y, "  hash: %s\n", cfg.Hash)
	}
	if cfg.HashTag != "" {
		fmt.Fprintf(&y, "  hash_tag: %q\n", cfg.HashTag)
	}
	if cfg.Distribution != "" {
		fmt.Fprintf(&y, "  distribution: %s\n", cfg.Distribution)
	}
	y.WriteString("  servers:\n")
	for _, l := range lines {
		fmt.Fprintf(&y, "   - %s\n", l)
	}
	conf := writeFile(t, dir, "nc.yml", y.String())
	start(t, listen, nc, "-c", conf, "-o", dir+"/nc.log", "-a", "127.0.0.1", "-s", strconv.Itoa(stats), "-p", dir+"/nc.pid")
	return listen
}

// compareBackends asks each backend which keys it holds with value and
// checks that exactly the one pool.Index names does.
func compareBackends(t *testing.T, pool *twemproxy.Pool, ports []int, keys [][]byte, value string) {
	t.Helper()
	owner := make([]int, len(keys))
	for i := range owner {
		owner[i] = -1
	}
	for b, port := range ports {
		found, err := dialMC(t, port).getAll(keys, value)
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range found {
			if ok {
				if owner[i] >= 0 {
					t.Fatalf("key %q on backends %d and %d", keys[i], owner[i], b)
				}
				owner[i] = b
			}
		}
	}
	mismatches := 0
	for i, k := range keys {
		if got := pool.Index(k); got != owner[i] {
			if mismatches++; mismatches <= 5 {
				t.Errorf("key %q: nutcracker stored it on server %d, Index says %d", k, owner[i], got)
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%d of %d keys mismatched", mismatches, len(keys))
	}
}

// memcachedArgs returns the command line of a loopback memcached on port;
// as root memcached insists on a user to drop to.
func memcachedArgs(port int) []string {
	args := []string{"-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-m", "64"}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "nobody")
	}
	return args
}
