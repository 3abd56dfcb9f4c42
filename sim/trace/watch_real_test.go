package trace_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/sim/trace"
)

// TestWatchOfRealMemcached captures a real memcached's `watch fetchers
// mutations` stream while two clients on four worker threads get, set,
// add and get keys, one with bytes memcached URI-encodes, and reads it
// back: exactly the clients' requests, each store once (not the fetch
// memcached logs inside it), hits and misses as the clients saw them.
// The threads' lines reach the watcher out of order; the reader puts them
// back.
func TestWatchOfRealMemcached(t *testing.T) {
	addr := startWatchedMemcached(t)
	watcher := dialMemcached(t, addr)
	watcher.do(t, "watch fetchers mutations\r\n", "OK\r\n")
	clients := [2]*mcConn{dialMemcached(t, addr), dialMemcached(t, addr)}
	stored := map[string]int64{} // what the server holds
	get := func(k string) trace.Request {
		if size, ok := stored[k]; ok {
			return trace.Request{Key: k, Command: "get", Op: trace.Read, Result: trace.Hit, Size: size}
		}
		return trace.Request{Key: k, Command: "get", Op: trace.Read, Result: trace.Miss, Size: -1}
	}
	var want []trace.Request
	for i := range 20 {
		c, k, size := clients[i%2], fmt.Sprintf("user:%d", i%5), int64(i+1)
		if i == 7 {
			k = "sp%20x,é"
		}
		want = append(want, get(k))
		c.do(t, "get "+k+"\r\n", "END\r\n")
		c.do(t, fmt.Sprintf("set %s 0 0 %d\r\n%s\r\n", k, size, strings.Repeat("v", int(size))), "STORED\r\n")
		c.do(t, "add "+k+" 0 0 1\r\nx\r\n", "NOT_STORED\r\n")
		stored[k] = size
		want = append(want, trace.Request{Key: k, Command: "set", Op: trace.Write, Size: size},
			trace.Request{Key: k, Command: "add", Op: trace.Write, Size: 1}, get(k))
		c.do(t, "get "+k+"\r\n", "END\r\n")
	}
	capture := captureWatch(t, watcher, clients[:])
	got, stats, err := readAll(t, trace.Auto, capture)
	if err != nil {
		t.Fatalf("%v\n%s", err, capture)
	}
	got = got[:len(got)-len(clients)] // the end markers, each its thread's last line
	for i := range got {
		if got[i].Time < time.Now().Add(-time.Hour).UnixNano() || got[i].Time > time.Now().UnixNano() {
			t.Errorf("request %d at %v, not within the test", i, time.Unix(0, got[i].Time))
		}
		got[i].Time = 0
	}
	if !reflect.DeepEqual(got, want) {
		diffReqs(t, got, want)
		t.Logf("stream:\n%s", capture)
	}
	if stats.Lost != 0 {
		t.Errorf("%d lines lost", stats.Lost)
	}
}

// captureWatch returns the stream the watcher has received once it holds
// every client's requests so far. Each worker thread logs into a buffer of
// its own, so the stream holds a client's requests once it holds a marker
// that client sent after them.
func captureWatch(t *testing.T, watcher *mcConn, clients []*mcConn) string {
	t.Helper()
	for i, c := range clients {
		c.do(t, fmt.Sprintf("get end-of-test-%d\r\n", i), "END\r\n")
	}
	var capture strings.Builder
	capture.WriteString("OK\n")
	for strings.Count(capture.String(), "key=end-of-test") < len(clients) {
		line, err := watcher.r.ReadString('\n')
		if err != nil {
			t.Fatalf("watch stream: %v after\n%s", err, capture.String())
		}
		capture.WriteString(line)
	}
	return capture.String()
}

// startWatchedMemcached runs a memcached with four worker threads until
// the test ends and returns its address.
func startWatchedMemcached(t *testing.T) string {
	bin := realprog.Binary(t, "memcached", "memcached")
	args := func(port int) []string {
		a := []string{"-l", "127.0.0.1", "-p", fmt.Sprint(port), "-U", "0", "-m", "16", "-t", "4"}
		if os.Geteuid() == 0 {
			a = append(a, "-u", "root")
		}
		return a
	}
	mc := realprog.StartOwned(t, "memcached", bin, args, realprog.MemcachedPID)
	return fmt.Sprintf("127.0.0.1:%d", mc.Port)
}

// mcConn is a memcached text-protocol connection.
type mcConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialMemcached(t *testing.T, addr string) *mcConn {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(time.Minute))
	return &mcConn{c, bufio.NewReader(c)}
}

// do sends cmd and reads the reply up to its end, want.
func (m *mcConn) do(t *testing.T, cmd, want string) {
	t.Helper()
	fmt.Fprint(m.c, cmd)
	for got := ""; !strings.HasSuffix(got, want); {
		line, err := m.r.ReadString('\n')
		if err != nil {
			t.Fatalf("%q: %v after %q", cmd, err, got)
		}
		got += line
	}
}

// diffReqs reports the first request where got and want differ.
func diffReqs(t *testing.T, got, want []trace.Request) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		if i >= len(got) || i >= len(want) || got[i] != want[i] {
			var g, w any
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			t.Errorf("request %d: got %+v, want %+v", i, g, w)
			return
		}
	}
}
