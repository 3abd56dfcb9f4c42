package twemproxy_test

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// respConn is a minimal RESP client: enough for SET and EXISTS.
type respConn struct {
	r *bufio.Reader
	w *bufio.Writer
}

func dialRESP(t *testing.T, port int) *respConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return &respConn{r: bufio.NewReaderSize(c, 1<<16), w: bufio.NewWriterSize(c, 1<<16)}
}

func (c *respConn) command(args ...[]byte) {
	fmt.Fprintf(c.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.w, "$%d\r\n%s\r\n", len(a), a)
	}
}

// each sends one command per key, pipelined in batches, and returns the
// reply lines.
func (c *respConn) each(keys [][]byte, cmd func(k []byte)) ([]string, error) {
	replies := make([]string, 0, len(keys))
	for lo := 0; lo < len(keys); lo += batch {
		hi := min(lo+batch, len(keys))
		for _, k := range keys[lo:hi] {
			cmd(k)
		}
		if err := c.w.Flush(); err != nil {
			return nil, err
		}
		for range keys[lo:hi] {
			line, err := c.r.ReadString('\n')
			if err != nil {
				return nil, err
			}
			replies = append(replies, line)
		}
	}
	return replies, nil
}

// binaryKeys returns n distinct keys of any bytes (space, CR, LF, NUL and
// bytes >= 0x80 included), the empty key first, up to 1000 bytes, with hash
// tags when tags is set.
func binaryKeys(seed uint64, n int, tags bool) [][]byte {
	r := rand.New(rand.NewPCG(seed, 13))
	keys := [][]byte{{}}
	seen := map[string]bool{"": true}
	for len(keys) < n {
		l := 1 + r.IntN(40)
		if r.IntN(20) == 0 {
			l = 300 + r.IntN(700)
		}
		k := make([]byte, l)
		for i := range k {
			k[i] = byte(r.IntN(256))
		}
		if tags && l > 3 && r.IntN(2) == 0 {
			a := r.IntN(l - 1)
			b := a + 1 + r.IntN(min(6, l-a-1))
			k[a], k[b] = '{', '}'
		}
		if !seen[string(k)] {
			seen[string(k)] = true
			keys = append(keys, k)
		}
	}
	return keys
}

var redisCases = []ncCase{
	{"ketama/default", twemproxy.Config{}, []int{1, 1, 1, 1}, nil},
	{"ketama/md5/names/weights", twemproxy.Config{Hash: "md5"}, []int{3, 1, 2}, []string{"redis-c", "redis-a", ""}},
	{"ketama/crc16/tag", twemproxy.Config{Hash: "crc16", HashTag: "{}"}, []int{1, 2, 1, 1}, nil},
	{"ketama/jenkins", twemproxy.Config{Hash: "jenkins"}, []int{1, 1}, nil},
	{"modula/murmur/weights", twemproxy.Config{Distribution: "modula", Hash: "murmur"}, []int{2, 1, 3, 1}, nil},
	{"modula/fnv1a_32/tag/names", twemproxy.Config{Distribution: "modula", Hash: "fnv1a_32", HashTag: "{}"}, []int{1, 1, 1}, []string{"b", "a", "c"}},
	{"ketama/one", twemproxy.Config{}, []int{1}, nil},
}

// TestNutcrackerRedis runs redis backends behind nutcracker (redis: true):
// RESP keys may hold any byte, so this covers the empty key, spaces,
// control bytes and keys longer than memcached allows.
func TestNutcrackerRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	rs := lookPathOrSkip(t, "redis-server", "redis-server")
	nc := lookPathOrSkip(t, "nutcracker", "nutcracker")
	ports := make([]int, 4)
	for i := range ports {
		ports[i] = freePort(t)
		start(t, ports[i], rs, "--port", strconv.Itoa(ports[i]), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	}
	total := 0
	for ci, c := range redisCases {
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
			value := []byte("r" + strconv.Itoa(ci))
			keys := binaryKeys(uint64(ci), 2000, c.cfg.HashTag != "")
			proxy := dialRESP(t, startNutcracker(t, nc, c.cfg, lines, "  redis: true\n"))
			replies, err := proxy.each(keys, func(k []byte) { proxy.command([]byte("SET"), k, value) })
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range replies {
				if r != "+OK\r\n" {
					t.Fatalf("SET %q through nutcracker: %q", keys[i], r)
				}
			}
			pool, err := twemproxy.New(c.cfg, servers)
			if err != nil {
				t.Fatal(err)
			}
			compareRedis(t, pool, ports[:len(servers)], keys, value)
			total += len(keys)
		})
	}
	t.Logf("%d configurations, %d keys", len(redisCases), total)
}

// compareRedis asks each backend which keys it holds (GET, value check) and
// compares with pool.Index. Keys are not deleted between cases; each case
// writes its own value.
func compareRedis(t *testing.T, pool *twemproxy.Pool, ports []int, keys [][]byte, value []byte) {
	t.Helper()
	owner := make([]int, len(keys))
	for i := range owner {
		owner[i] = -1
	}
	want := "$" + strconv.Itoa(len(value)) + "\r\n"
	for b, port := range ports {
		c := dialRESP(t, port)
		for lo := 0; lo < len(keys); lo += batch {
			hi := min(lo+batch, len(keys))
			for _, k := range keys[lo:hi] {
				c.command([]byte("GET"), k)
			}
			if err := c.w.Flush(); err != nil {
				t.Fatal(err)
			}
			for i := lo; i < hi; i++ {
				line, err := c.r.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(line, "$") || line == "$-1\r\n" {
					continue
				}
				n, _ := strconv.Atoi(line[1 : len(line)-2])
				data := make([]byte, n+2)
				if _, err := io.ReadFull(c.r, data); err != nil {
					t.Fatal(err)
				}
				if line == want && string(data[:n]) == string(value) {
					if owner[i] >= 0 {
						t.Fatalf("key %q on backends %d and %d", keys[i], owner[i], b)
					}
					owner[i] = b
				}
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
