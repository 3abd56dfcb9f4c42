package proxy

import (
	"fmt"
	"strings"
	"testing"
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
	if got := other.do("GET", "big"); !strings.HasPrefix(got, "-ERR "+r0.addr+": ") || !strings.Contains(got, "kolco.buffer_limit is full") {
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
