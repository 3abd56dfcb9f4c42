package slots

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

	"github.com/kolco-dev/kolco/internal/testproc"
)

// startRedis runs a cluster-enabled redis-server on a free 127.0.0.1 port
// in a temporary directory and returns a connection to it. The server is
// killed when the test ends.
func startRedis(t *testing.T) net.Conn {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server not found (Debian package redis-server)")
		}
		t.Skip("redis-server not found; install the Debian package redis-server")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
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
	// Wait for the server's own readiness line, not a fixed delay.
	sc := bufio.NewScanner(out)
	ready := false
	for sc.Scan() {
		if strings.Contains(sc.Text(), "Ready to accept connections") {
			ready = true
			break
		}
	}
	if !ready {
		t.Fatal("redis-server exited before it was ready")
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	return conn
}

// appendCommand appends a RESP array of bulk strings.
func appendCommand(b []byte, args ...string) []byte {
	b = fmt.Appendf(b, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

// readInteger reads one RESP reply that must be an integer.
func readInteger(r *bufio.Reader) (int, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if !strings.HasPrefix(line, ":") {
		return 0, fmt.Errorf("unexpected reply %q", line)
	}
	return strconv.Atoi(line[1:])
}

// redisKeys returns hash-tag edge cases, keys with bytes >= 0x80, very short
// and long keys, and random ones.
func redisKeys() []string {
	keys := []string{
		"", "a", "{", "}", "{}", "{}}", "{{}}", "{{}", "}{", "foo{}{bar}", "foo{{bar}}zap",
		"foo{bar}zap", "{user1000}.following", "{user1000}.followers", "a{b}c{d}",
		"{a}}", "x{}y{z}", "\x00", "\x00{\x00}\x00", "\xff", "\xff{\x80}", "123456789",
		strings.Repeat("k", 10000), "{" + strings.Repeat("t", 5000) + "}", "\r\n", "{\r}\n",
	}
	r := rand.New(rand.NewPCG(11, 12))
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

func TestKeySlotMatchesRedisServer(t *testing.T) {
	conn := startRedis(t)
	keys := redisKeys()
	var req []byte
	for _, k := range keys {
		req = appendCommand(req, "CLUSTER", "KEYSLOT", k)
	}
	errc := make(chan error, 1)
	go func() { _, err := conn.Write(req); errc <- err }()
	r := bufio.NewReader(conn)
	mismatches := 0
	for _, k := range keys {
		want, err := readInteger(r)
		if err != nil {
			t.Fatalf("reading CLUSTER KEYSLOT reply: %v", err)
		}
		if got := KeySlot(k); got != want {
			mismatches++
			if mismatches <= 10 {
				t.Errorf("KeySlot(%q) = %d, redis-server says %d", k, got, want)
			}
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if mismatches > 0 {
		t.Errorf("%d of %d keys differ from redis-server", mismatches, len(keys))
	}
	t.Logf("%d keys checked against redis-server", len(keys))
}
