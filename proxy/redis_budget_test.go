package proxy

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRedisBufferLimits: a Redis request larger than kolco.buffer_limit
// is read and dropped and gets -OOM, and a reply's bulk string that does
// not fit fails its request; either way the connection stays in step,
// other clients are unaffected and nothing stays held.
func TestRedisBufferLimits(t *testing.T) {
	r0 := startRedis(t, 0)
	s := startProxy(t, redisPoolYAML("", r0)+"kolco:\n  buffer_limit: 1048576\n")
	addr := s.Addr("p").String()
	big := strings.Repeat("b", 2<<20)
	c, other := dialRedis(t, addr), dialRedis(t, addr)
	if got := c.do("SET", "big", big); !strings.HasPrefix(got, "-OOM ") {
		t.Errorf("SET over the limit: %q", got)
	}
	if got := c.do("PING"); got != "+PONG\r\n" {
		t.Errorf("PING after: %q", got)
	}
	if got := other.do("SET", "small", "x"); got != "+OK\r\n" {
		t.Errorf("another client's SET: %q", got)
	}
	if got := dialRedis(t, r0.addr).do("SET", "big", big); got != "+OK\r\n" {
		t.Fatalf("SET on the server: %q", got)
	}
	if got := other.do("GET", "big"); !strings.HasPrefix(got, "-ERR ") || !strings.Contains(got, "kolco.buffer_limit is full") || strings.Contains(got, r0.addr) {
		t.Errorf("GET of a value over the limit: %q", got)
	}
	if got := other.do("GET", "small"); got != "$1\r\nx\r\n" {
		t.Errorf("GET after: %q", got)
	}
	eventually(t, "the buffers released", func() bool { return s.budget.inUse() == 0 })
}

// TestRedisClientBufferLimit: a client pipelining more than its
// client_buffer_limit has its requests answered in rounds that end at the
// limit: every request is served, and the proxy holds no more than the
// limit and one request for it.
func TestRedisClientBufferLimit(t *testing.T) {
	r0 := startRedis(t, 0)
	const limit, size, n = 256 << 10, 100 << 10, 40
	s := startProxy(t, redisPoolYAML(fmt.Sprintf("  client_buffer_limit: %d\n", limit), r0))
	c := dialRedis(t, s.Addr("p").String())
	val := strings.Repeat("v", size)
	go func() {
		for i := range n {
			c.send("SET", fmt.Sprint("k", i), val)
		}
		_ = c.w.Flush()
	}()
	for i := range n {
		b, _, err := c.rr.Read(nil, nil)
		if string(b) != "+OK\r\n" || err != nil {
			t.Fatalf("SET %d: %q %v", i, b, err)
		}
	}
	p := s.budget.peak()
	t.Logf("held at most %d bytes", p)
	if p == 0 || p > limit+3*size {
		t.Errorf("the proxy held at most %d bytes for a client with client_buffer_limit %d and requests of %d", p, limit, size)
	}
	eventually(t, "the buffers released", func() bool { return s.budget.inUse() == 0 })
}

// pipelineBigSets sends n SETs of size-byte values on c in one write, each
// followed by an ECHO of its number, then reads their replies, and returns
// an error naming the first that is not the one due in request order. The
// connection's deadline, a third of the pool's timeout in budgetYAML,
// fails a request that waited for room until its timeout.
func pipelineBigSets(c *rc, prefix string, n, size int) error {
	c.guard = 0
	_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	val := strings.Repeat("v", size)
	for i := range n {
		c.send("SET", fmt.Sprint(prefix, i), val)
		c.send("ECHO", fmt.Sprint(i))
	}
	for i := range n {
		set, err := c.read()
		if set != "+OK\r\n" || err != nil {
			return fmt.Errorf("SET %d of %d: %q %v", i+1, n, set, err)
		}
		echo, err := c.read()
		if want := fmt.Sprintf("$1\r\n%d\r\n", i); echo != want || err != nil {
			return fmt.Errorf("ECHO after SET %d: %q %v, want %q", i+1, echo, err, want)
		}
	}
	return nil
}

// budgetYAML is a Redis pool over r0 whose requests may wait 30 s for room
// in a kolco.buffer_limit of 1 MiB.
func budgetYAML(r0 *redisServer) string {
	return redisPoolYAML("  timeout: 30000\n", r0) + "kolco:\n  buffer_limit: 1048576\n"
}

// TestRedisBudgetOwnRound: a client pipelining requests that fit in
// kolco.buffer_limit one by one, but not together, is answered for the
// earlier ones rather than left waiting for the room they hold: every SET
// succeeds, the replies come in request order, none waits for the pool's
// timeout, and nothing stays held.
func TestRedisBudgetOwnRound(t *testing.T) {
	r0 := startRedis(t, 0)
	s := startProxy(t, budgetYAML(r0))
	c := dialRedis(t, s.Addr("p").String())
	if err := pipelineBigSets(c, "k", 3, 200<<10); err != nil {
		t.Fatal(err)
	}
	if got := c.do("STRLEN", "k2"); got != fmt.Sprintf(":%d\r\n", 200<<10) {
		t.Errorf("STRLEN of the last value: %q", got)
	}
	eventually(t, "the buffers released", func() bool { return s.budget.inUse() == 0 })
}

// TestRedisBudgetTwoClients: two clients pipelining requests that do not
// fit in kolco.buffer_limit together both get every request served, none
// waiting for the pool's timeout.
func TestRedisBudgetTwoClients(t *testing.T) {
	r0 := startRedis(t, 0)
	s := startProxy(t, budgetYAML(r0))
	addr := s.Addr("p").String()
	clients := []*rc{dialRedis(t, addr), dialRedis(t, addr)}
	errs := make(chan error, len(clients))
	for i, c := range clients {
		go func() { errs <- pipelineBigSets(c, fmt.Sprint("c", i, "-"), 3, 200<<10) }()
	}
	for i := range clients {
		if err := <-errs; err != nil {
			t.Errorf("client %d: %v", i, err)
		}
	}
	eventually(t, "the buffers released", func() bool { return s.budget.inUse() == 0 })
}
