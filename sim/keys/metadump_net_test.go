package keys

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// startMemcached runs a real memcached on a free loopback port until the
// test ends and returns its address.
func startMemcached(t *testing.T) string {
	t.Helper()
	bin := realprog.Binary(t, "memcached", "memcached")
	port := realprog.FreePorts(t, 1)[0]
	args := []string{"-l", "127.0.0.1", "-p", fmt.Sprint(port), "-U", "0", "-m", "64", "-t", "1"}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "root")
	}
	cmd := exec.Command(bin, args...)
	if err := testproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	realprog.WaitListening(t, "memcached", []int{port}, exited)
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// TestMetadumpOfRealMemcached stores keys with bytes that memcached
// escapes in its dump, and values of several sizes, and reads them back
// from the dump: every key once, decoded, its size at least its key and
// value, its expiry as set.
func TestMetadumpOfRealMemcached(t *testing.T) {
	addr := startMemcached(t)
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	want := map[string]int{}
	var req strings.Builder
	for i := range 300 {
		k := fmt.Sprintf("user:%d/100%%+é~%d", i, i%7)
		want[k] = i * 10
		exp := 0
		if i == 7 {
			exp = 3600
		}
		fmt.Fprintf(&req, "set %s 0 %d %d\r\n%s\r\n", k, exp, i*10, strings.Repeat("v", i*10))
	}
	if _, err := io.WriteString(conn, req.String()); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	for range want {
		if line, err := r.ReadString('\n'); err != nil || line != "STORED\r\n" {
			t.Fatalf("set: %q, %v", line, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	items, err := Metadump(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != len(want) {
		t.Fatalf("%d items listed, %d stored", len(items), len(want))
	}
	for _, it := range items {
		v, ok := want[it.Key]
		if !ok {
			t.Fatalf("listed key %q was never stored", it.Key)
		}
		delete(want, it.Key)
		if it.Size < int64(len(it.Key)+v) || (it.Exp == -1) != (it.Key != "user:7/100%+é~0") {
			t.Errorf("%q: size %d for a %d-byte value, expiry %d", it.Key, it.Size, v, it.Exp)
		}
	}
}
