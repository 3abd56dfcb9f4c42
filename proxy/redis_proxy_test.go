package proxy

import (
	"strings"
	"testing"
)

// TestRedisSmoke serves the basic commands of a Redis pool over two real
// servers.
func TestRedisSmoke(t *testing.T) {
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	s := startProxy(t, redisPoolYAML("  hash_tag: \"{}\"\n", rs...))
	c := dialRedis(t, s.Addr("p").String())
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"PING"}, "+PONG\r\n"},
		{[]string{"SET", "a", "1"}, "+OK\r\n"},
		{[]string{"GET", "a"}, "$1\r\n1\r\n"},
		{[]string{"MSET", "b", "2", "c", "3", "d", "4"}, "+OK\r\n"},
		{[]string{"MGET", "a", "b", "nope", "c", "d"}, "*5\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n$1\r\n3\r\n$1\r\n4\r\n"},
		{[]string{"DEL", "a", "b", "nope"}, ":2\r\n"},
		{[]string{"SADD", "{t}x", "1", "2"}, ":2\r\n"},
		{[]string{"SADD", "{t}y", "2", "3"}, ":2\r\n"},
		{[]string{"SINTER", "{t}x", "{t}y"}, "*1\r\n$1\r\n2\r\n"},
		{[]string{"HELLO", "4"}, "-NOPROTO unsupported protocol version\r\n"},
	} {
		if got := c.do(step.args...); got != step.want {
			t.Errorf("%q: got %q, want %q", step.args, got, step.want)
		}
	}
}

// TestRedisLimits: a client over max_client_connections gets a RESP
// error and is closed; a request of more keys than max_keys is refused and
// the connection kept; a bulk string over max_value_size ends the
// connection, as one over the server's own limit does.
func TestRedisLimits(t *testing.T) {
	r0 := startRedis(t, 0)
	s := startProxy(t, redisPoolYAML("  max_client_connections: 1\n  max_keys: 2\n  max_value_size: 10\n", r0))
	addr := s.Addr("p").String()
	c := dialRedis(t, addr)
	if got := c.do("MGET", "a", "b", "c"); !strings.HasPrefix(got, "-ERR ") {
		t.Errorf("MGET of 3 keys: %q, want an error", got)
	}
	if got := c.do("MGET", "a", "b"); got != "*2\r\n$-1\r\n$-1\r\n" {
		t.Errorf("MGET of 2 keys: %q", got)
	}
	second := dialRedis(t, addr)
	if got, err := second.read(); got != "-ERR too many open connections\r\n" || err != nil {
		t.Errorf("a second client: %q, %v", got, err)
	}
	c.send("SET", "k", "01234567890")
	if got, err := c.read(); got != "-ERR Protocol error: invalid bulk length\r\n" || err != nil || !c.closed() {
		t.Errorf("a value of 11 bytes: %q, %v, and the connection kept", got, err)
	}
}
