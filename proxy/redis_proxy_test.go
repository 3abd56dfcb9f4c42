package proxy

import (
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
		{[]string{"HELLO", "3"}, "-ERR unknown command 'HELLO', with args beginning with: '3' \r\n"},
	} {
		if got := c.do(step.args...); got != step.want {
			t.Errorf("%q: got %q, want %q", step.args, got, step.want)
		}
	}
}
