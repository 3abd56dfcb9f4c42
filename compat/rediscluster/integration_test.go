package rediscluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// node is one redis-server started by a test.
type node struct {
	port int
	conn net.Conn
	r    *bufio.Reader
}

// startNode starts a redis-server in cluster mode on a free port. A port
// is free when chosen, not when the server binds it (nor is the cluster
// bus's, the port plus 10000): a server that exits before it is ready is
// started again on another, up to five times.
func startNode(t *testing.T, bin string) *node {
	t.Helper()
	for attempt := 1; ; attempt++ {
		n, exited := tryNode(t, bin)
		if n != nil {
			return n
		}
		if !exited || attempt == 5 {
			t.Fatal("redis-server exited before it was ready, five times")
		}
	}
}

// tryNode starts one node; it returns nil and true when the server exited
// before it was ready.
func tryNode(t *testing.T, bin string) (*node, bool) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--cluster-enabled", "yes", "--cluster-config-file", dir+"/nodes.conf",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := testproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			if !ok && strings.Contains(sc.Text(), "Ready to accept connections") {
				ok = true
				ready <- true
			}
		}
		if !ok {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			return nil, true
		}
	case <-time.After(realprog.Patience):
		t.Fatalf("redis-server not ready after %v", realprog.Patience)
	}
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(time.Minute))
	return &node{port: port, conn: conn, r: bufio.NewReader(conn)}, false
}

func appendCommand(b []byte, args ...string) []byte {
	b = fmt.Appendf(b, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

// reply reads one RESP reply and returns its first line (for a bulk string,
// the string itself).
func (n *node) reply(t *testing.T) string {
	t.Helper()
	line, err := n.r.ReadString('\n')
	if err != nil {
		t.Fatalf("reading reply: %v", err)
	}
	line = strings.TrimSuffix(line, "\r\n")
	if strings.HasPrefix(line, "$") && line != "$-1" {
		size, _ := strconv.Atoi(line[1:])
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(n.r, buf); err != nil {
			t.Fatalf("reading bulk reply: %v", err)
		}
		return string(buf[:size])
	}
	return line
}

func (n *node) do(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := n.conn.Write(appendCommand(nil, args...)); err != nil {
		t.Fatal(err)
	}
	return n.reply(t)
}

// TestAgainstRedisCluster forms a three-master cluster with uneven,
// non-contiguous slot ranges, reads the slot table back from CLUSTER NODES
// and sends GET for thousands of keys to one master: it answers for its own
// keys and redirects (MOVED slot ip:port) the others. The master Index
// predicts must be the one Redis names, for every key.
func TestAgainstRedisCluster(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server not found (Debian package redis-server)")
		}
		t.Skip("redis-server not found; install the Debian package redis-server")
	}
	nodes := []*node{startNode(t, bin), startNode(t, bin), startNode(t, bin)}
	ranges := [][]string{{"0", "4000", "12000", "16383"}, {"4001", "9000"}, {"9001", "11999"}}
	for i, n := range nodes {
		if r := n.do(t, append([]string{"CLUSTER", "ADDSLOTSRANGE"}, ranges[i]...)...); r != "+OK" {
			t.Fatalf("ADDSLOTSRANGE: %s", r)
		}
		if i > 0 {
			if r := nodes[0].do(t, "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(n.port)); r != "+OK" {
				t.Fatalf("MEET: %s", r)
			}
		}
	}
	// Gossip spreads the slot table; poll, bounded, until node 0 sees a
	// healthy cluster.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(nodes[0].do(t, "CLUSTER", "INFO"), "cluster_state:ok") {
		if time.Now().After(deadline) {
			t.Fatal("cluster not ok after 30s")
		}
		time.Sleep(50 * time.Millisecond) // polling for readiness, not ordering
	}
	masters, err := ParseClusterNodes(nodes[0].do(t, "CLUSTER", "NODES"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(masters)
	if err != nil {
		t.Fatal(err)
	}
	self := fmt.Sprintf("127.0.0.1:%d", nodes[0].port)

	keys := clusterKeys()
	var req []byte
	for _, k := range keys {
		req = appendCommand(req, "GET", k)
	}
	errc := make(chan error, 1)
	go func() { _, err := nodes[0].conn.Write(req); errc <- err }()
	mismatches := 0
	for _, k := range keys {
		got := self
		if r := nodes[0].reply(t); r != "$-1" {
			f := strings.Fields(r)
			if len(f) != 3 || f[0] != "-MOVED" {
				t.Fatalf("GET %q: unexpected reply %q", k, r)
			}
			got = f[2]
		}
		if want := masters[c.Index([]byte(k))].Addr; got != want {
			if mismatches++; mismatches <= 10 {
				t.Errorf("key %q: Redis says %s, Index predicts %s", k, got, want)
			}
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d keys over 3 masters, %d mismatches", len(keys), mismatches)
	if mismatches > 0 {
		t.Fatalf("%d of %d keys mismatched", mismatches, len(keys))
	}
}

// clusterKeys returns hash-tag edge cases, the empty key, bytes >= 0x80,
// long keys and random ones.
func clusterKeys() []string {
	keys := []string{"", "{", "}", "{}", "{}}", "{{}}", "foo{}{bar}", "foo{{bar}}zap", "foo{bar}zap",
		"{user1000}.following", "{user1000}.followers", "\xff{\x80}", strings.Repeat("k", 5000),
		"{" + strings.Repeat("t", 3000) + "}x"}
	r := rand.New(rand.NewPCG(3, 4))
	const special = "{}ab\x00\x80\xff"
	for i := range 5000 {
		b := make([]byte, r.IntN(40))
		for j := range b {
			if i%2 == 0 {
				b[j] = special[r.IntN(len(special))]
			} else {
				b[j] = byte(r.UintN(256))
			}
		}
		keys = append(keys, string(b))
	}
	return keys
}
