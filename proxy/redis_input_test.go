package proxy

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// TestRedisGarbageClient sends random bytes on one connection after
// another while a second client works: the garbage gets error replies
// and its connection closed (or closed without a reply, for what reads
// as HTTP), and the other client notices nothing.
func TestRedisGarbageClient(t *testing.T) {
	r0 := startRedis(t, 0)
	s := startProxy(t, redisPoolYAML("", r0))
	addr := s.Addr("p").String()
	good := dialRedis(t, addr)
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 30 {
		bad := dialRedis(t, addr)
		junk := make([]byte, 1+r.IntN(4096))
		for i := range junk {
			junk[i] = "*$\r\n-:0123456789abc "[r.IntN(20)]
			if r.IntN(4) == 0 {
				junk[i] = byte(r.IntN(256))
			}
		}
		_, _ = bad.conn.Write(junk)
		_ = bad.conn.(*net.TCPConn).CloseWrite()
		for {
			reply, err := bad.read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil || !redis.IsError([]byte(reply)) {
				t.Fatalf("round %d: %q, %v; want error replies, then EOF", round, reply, err)
			}
		}
		if got := good.do("SET", fmt.Sprint("g", round), "x"); got != "+OK\r\n" {
			t.Fatalf("good client: %q", got)
		}
	}
}

// TestRedisHugeBulk: a bulk length over the server's limit is refused as
// redis-server refuses it, closing the connection; one within it that
// never comes whole holds only the bytes that came, and other clients are
// served meanwhile.
func TestRedisHugeBulk(t *testing.T) {
	r0 := startRedis(t, 0)
	s := startProxy(t, redisPoolYAML("", r0))
	addr := s.Addr("p").String()
	over := dialRedis(t, addr)
	_, _ = over.conn.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870913\r\n"))
	if got, err := over.read(); got != "-ERR Protocol error: invalid bulk length\r\n" || err != nil {
		t.Fatalf("bulk over the limit: %q, %v", got, err)
	}
	if !over.closed() {
		t.Fatal("the connection stayed open after a protocol error")
	}

	// TotalAlloc counts every byte allocated, by the proxy in this
	// process too, whatever the collector freed since.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	stall := dialRedis(t, addr)
	chunk := strings.Repeat("x", 64<<10)
	if _, err := stall.conn.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$400000000\r\n" + chunk)); err != nil {
		t.Fatal(err)
	}
	good := dialRedis(t, addr)
	if got := good.do("SET", "a", "1"); got != "+OK\r\n" {
		t.Fatalf("another client while one stalls: %q", got)
	}
	_ = stall.conn.(*net.TCPConn).CloseWrite()
	if !stall.closed() { // the proxy read every byte that came, then the end
		t.Fatal("a request cut short left the connection open")
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
		t.Errorf("the proxy allocated %d bytes for a 400 MB bulk string of which 64 kB came", n)
	}
}

// TestRedisDeepReply: a server reply nested deeper than the proxy reads
// (a script's table, 100 levels) fails that request with an error, and
// the connections to the client and the server stay in step.
func TestRedisDeepReply(t *testing.T) {
	t.Parallel()
	r0 := startRedis(t, 0)
	s := startProxy(t, redisPoolYAML("", r0))
	c := dialRedis(t, s.Addr("p").String())
	deep := "local t = {1} local c = t for i = 1, 100 do c[2] = {1} c = c[2] end return t"
	if got := c.do("EVAL", deep, "1", "k"); !strings.HasPrefix(got, "-ERR ") || !strings.Contains(got, "nested too deep") || strings.Contains(got, r0.addr) {
		t.Fatalf("100 levels: %.80q, want the proxy's error, not naming the server", got)
	}
	shallow := "local t = {1} local c = t for i = 1, 10 do c[2] = {1} c = c[2] end return t"
	if got := c.do("EVAL", shallow, "1", "k"); strings.Count(got, "*2\r\n") != 10 {
		t.Fatalf("10 levels: %q", got)
	}
	if got := c.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("after it: %q", got)
	}
}

// TestRedisClientThatDoesNotRead: a client that pipelines requests and
// never reads its replies holds at most max_pending of them, is closed
// after client_idle_timeout, and the others are served meanwhile.
func TestRedisClientThatDoesNotRead(t *testing.T) {
	r0 := startRedis(t, 0)
	s := startProxy(t, redisPoolYAML("  client_idle_timeout: 300\n  max_pending: 16\n", r0))
	addr := s.Addr("p").String()
	c := dialRedis(t, addr)
	if got := c.do("SET", "big", strings.Repeat("v", 100_000)); got != "+OK\r\n" {
		t.Fatalf("SET: %q", got)
	}
	// 200 replies of 100 kB: far more than the socket buffers hold.
	for range 200 {
		c.send("GET", "big")
	}
	_ = c.w.Flush()
	// The others are served all along. Each asks on a connection of its
	// own: one connection asking in turn would itself be idle past the
	// timeout whenever a busy machine holds the test back that long.
	stalled := c.conn.LocalAddr().String()
	eventually(t, "the stalled client closed", func() bool {
		other := dialRedis(t, addr)
		got := other.do("PING")
		other.conn.Close()
		if got != "+PONG\r\n" {
			t.Fatalf("another client: %q", got)
		}
		// The stalled client's queue, the request its reader holds, and
		// the other clients' last.
		if n := s.testPool("p").requests.refs.Load(); n > 16+2 {
			t.Fatalf("%d requests in flight, over max_pending", n)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for conn := range s.listening.clients {
			if conn.RemoteAddr().String() == stalled {
				return false
			}
		}
		return true
	})
}
