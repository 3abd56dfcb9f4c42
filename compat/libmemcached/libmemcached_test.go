package libmemcached_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/compat/libmemcached"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// generateHashProgram reads configurations until end of input, each a line
// "distribution hash sort_hosts n nkeys", n lines "host port weight" and
// nkeys hex-encoded keys, one a line. For each it sets the behaviours, adds
// the servers with memcached_server_add_with_weight and
// prints for each key memcached_generate_hash (an index into libmemcached's
// own server list, sorted with SORT_HOSTS) and that server's host and port.
const generateHashProgram = `
#include <libmemcached-1.0/memcached.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unhex(int c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

int main(void) {
	static char line[1 << 16], key[1 << 15], host[2048];
	char dist[64];
	int hash, sort, n, nkeys;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "%63s %d %d %d %d", dist, &hash, &sort, &n, &nkeys) != 5) return 2;
		memcached_st *m = memcached_create(NULL);
		if (sort) memcached_behavior_set(m, MEMCACHED_BEHAVIOR_SORT_HOSTS, 1);
		if (!strcmp(dist, "ketama")) memcached_behavior_set(m, MEMCACHED_BEHAVIOR_KETAMA, 1);
		else if (!strcmp(dist, "ketama_weighted")) memcached_behavior_set(m, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
		else if (!strcmp(dist, "ketama_spy")) memcached_behavior_set_distribution(m, MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY);
		else if (strcmp(dist, "modula")) return 3;
		if (hash >= 0 && memcached_behavior_set(m, MEMCACHED_BEHAVIOR_HASH, (uint64_t)hash) != MEMCACHED_SUCCESS) return 4;
		for (int i = 0; i < n; i++) {
			unsigned port, weight;
			if (!fgets(line, sizeof line, stdin) || sscanf(line, "%2047s %u %u", host, &port, &weight) != 3) return 5;
			if (memcached_server_add_with_weight(m, strcmp(host, "-") ? host : "", (in_port_t)port, weight) != MEMCACHED_SUCCESS) return 6;
		}
		for (int k = 0; k < nkeys; k++) {
			if (!fgets(line, sizeof line, stdin)) return 7;
			size_t len = strcspn(line, "\n") / 2;
			for (size_t i = 0; i < len; i++) key[i] = (char)(unhex(line[2*i]) << 4 | unhex(line[2*i+1]));
			uint32_t idx = memcached_generate_hash(m, key, len);
			const memcached_instance_st *in = memcached_server_instance_by_position(m, idx);
			printf("%u %s %u\n", idx, memcached_server_name(in), (unsigned)memcached_server_port(in));
		}
		memcached_free(m);
	}
	return 0;
}
`

// memcachedHash maps hash names to memcached_hash_t values.
var memcachedHash = map[string]int{
	"default": 0, "md5": 1, "crc": 2, "fnv1_64": 3, "fnv1a_64": 4, "fnv1_32": 5,
	"fnv1a_32": 6, "hsieh": 7, "murmur": 8, "jenkins": 9, "murmur3": 10,
}

func buildC(t *testing.T, src string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		skipOrFail(t, "cc not found (install build-essential)")
	}
	if _, err := os.Stat("/usr/include/libmemcached-1.0/memcached.h"); err != nil {
		skipOrFail(t, "libmemcached headers not found (install libmemcached-dev libsasl2-dev)")
	}
	dir := t.TempDir()
	c, bin := filepath.Join(dir, "prog.c"), filepath.Join(dir, "prog")
	if err := os.WriteFile(c, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := testproc.CombinedOutput(exec.Command(cc, "-O1", "-o", bin, c, "-lmemcached", "-lhashkit")); err != nil {
		skipOrFail(t, "cannot build against libmemcached (install libmemcached-dev libsasl2-dev): "+err.Error()+"\n"+string(out))
	}
	return bin
}

func skipOrFail(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// randomKeys returns n keys from a fixed seed: the empty key, every single
// byte, random bytes of lengths 0..80, some of 200..300 and a few of
// 1000..5000.
func randomKeys(seed uint64, n int) [][]byte {
	r := rand.New(rand.NewPCG(seed, 11))
	keys := [][]byte{{}}
	for b := 0; b < 256; b++ {
		keys = append(keys, []byte{byte(b)})
	}
	for len(keys) < n {
		l := r.IntN(80)
		switch r.IntN(100) {
		case 0:
			l = 1000 + r.IntN(4000)
		case 1, 2, 3, 4, 5:
			l = 200 + r.IntN(100)
		}
		k := make([]byte, l)
		for i := range k {
			k[i] = byte(r.IntN(256))
		}
		keys = append(keys, k)
	}
	return keys
}

// serverLists are the server lists every configuration runs over.
var serverLists = map[string][]libmemcached.Server{
	"one": {{Host: "10.0.0.1", Port: 11211}},
	"ports": {
		{Host: "127.0.0.1", Port: 11211}, {Host: "127.0.0.1", Port: 11212}, {Host: "127.0.0.1", Port: 22122},
	},
	"names-weights": {
		{Host: "localhost", Port: 11211, Weight: 1}, {Host: "cache-b.example.com", Port: 11211, Weight: 2},
		{Host: "10.1.2.3", Port: 11311, Weight: 3}, {Host: "::1", Port: 11211, Weight: 1},
		{Host: "cache-a.example.com", Port: 0, Weight: 0},
	},
	"unequal": {
		{Host: "mc3", Port: 11211, Weight: 5}, {Host: "mc1", Port: 11212, Weight: 1}, {Host: "mc2", Port: 11211, Weight: 1},
		{Host: "mc1", Port: 11211, Weight: 2}, {Host: "", Port: 11213, Weight: 1},
	},
	"equal25": equalServers(25),
	"ten":     tenServers(),
}

func equalServers(n int) []libmemcached.Server {
	s := make([]libmemcached.Server, n)
	for i := range s {
		s[i] = libmemcached.Server{Host: fmt.Sprintf("10.0.%d.%d", i/7, i), Port: 11211 + i%3}
	}
	return s
}

func tenServers() []libmemcached.Server {
	s := make([]libmemcached.Server, 10)
	for i := range s {
		s[i] = libmemcached.Server{Host: "node" + strconv.Itoa(9-i) + ".cache", Port: 11211, Weight: i + 1}
	}
	return s
}

// lmCase is one configuration of the libmemcached comparison.
type lmCase struct {
	name    string
	cfg     libmemcached.Config
	servers []libmemcached.Server
	keys    [][]byte
}

// TestGenerateHash compares Index with libmemcached's memcached_generate_hash
// for every distribution, several hashes, every server list and with and
// without SORT_HOSTS, in one run of the C program.
func TestGenerateHash(t *testing.T) {
	bin := buildC(t, generateHashProgram)
	dists := map[string][]string{
		"modula":          {"", "md5", "crc", "fnv1a_64", "murmur3", "jenkins"},
		"ketama":          {"", "md5", "fnv1_32", "fnv1_64", "murmur", "murmur3", "crc"},
		"ketama_weighted": {"", "default", "fnv1a_32", "jenkins"},
		"ketama_spy":      {"", "md5", "fnv1a_64"},
	}
	var cases []lmCase
	var in bytes.Buffer
	total := 0
	for dist, hashes := range dists {
		for _, hash := range hashes {
			for list, servers := range serverLists {
				for _, sort := range []bool{false, true} {
					if sort && (list == "one" || list == "equal25") {
						continue
					}
					c := lmCase{
						name:    fmt.Sprintf("%s/%s/%s/sort=%v", dist, cmpOr(hash, "unset"), list, sort),
						cfg:     libmemcached.Config{Distribution: dist, Hash: hash, SortHosts: sort},
						servers: servers,
						keys:    randomKeys(uint64(len(cases)), 1200),
					}
					writeCase(&in, c)
					cases = append(cases, c)
					total += len(c.keys)
				}
			}
		}
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	out, err := testproc.Output(cmd)
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for _, c := range cases {
		checkCase(t, c, sc)
	}
	if sc.Scan() {
		t.Errorf("extra output %q", sc.Text())
	}
	t.Logf("%d configurations, %d keys", len(cases), total)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// writeCase writes one configuration in the C program's input format.
func writeCase(in *bytes.Buffer, c lmCase) {
	hash := -1
	if c.cfg.Hash != "" {
		hash = memcachedHash[c.cfg.Hash]
	}
	sort := 0
	if c.cfg.SortHosts {
		sort = 1
	}
	fmt.Fprintf(in, "%s %d %d %d %d\n", c.cfg.Distribution, hash, sort, len(c.servers), len(c.keys))
	for _, s := range c.servers {
		fmt.Fprintf(in, "%s %d %d\n", cmpOr(s.Host, "-"), s.Port, s.Weight)
	}
	for _, k := range c.keys {
		in.WriteString(hex.EncodeToString(k))
		in.WriteByte('\n')
	}
}

// checkCase reads the C program's answers for c and compares each with
// Index: the same server, and without SORT_HOSTS the same index.
func checkCase(t *testing.T, c lmCase, sc *bufio.Scanner) {
	t.Helper()
	pool, err := libmemcached.New(c.cfg, c.servers)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	filled := pool.Servers()
	mismatches := 0
	for i, k := range c.keys {
		if !sc.Scan() {
			t.Fatalf("%s: libmemcached answered %d of %d keys", c.name, i, len(c.keys))
		}
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			t.Fatalf("%s: line %q", c.name, sc.Text())
		}
		idx, _ := strconv.Atoi(f[0])
		got := pool.Index(k)
		s := filled[got]
		if s.Host != f[1] || strconv.Itoa(s.Port) != f[2] || (!c.cfg.SortHosts && got != idx) {
			if mismatches++; mismatches <= 3 {
				t.Errorf("%s: key %x: libmemcached %s, Index %d (%+v)", c.name, k, sc.Text(), got, s)
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%s: %d of %d keys mismatched", c.name, mismatches, len(c.keys))
	}
}
