package proxy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// TestRedisBlockingGoRedis: go-redis v9's blocking commands through a pool
// of three servers: BLPop waits until another client pushes, BLPop with a
// timeout on an empty list gets nil once it passes, BLMove, BRPopLPush and
// BZPopMin on keys of one hash tag, and a blocking command whose keys are
// on two servers is refused naming the rule. The client's other requests
// go on meanwhile on its other connections.
func TestRedisBlockingGoRedis(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	s := startProxy(t, redisPoolYAML("  hash_tag: \"{}\"\n", rs...))
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr("p").String(), PoolSize: 4})
	defer c.Close()
	popped := make(chan []string, 1)
	go func() {
		v, err := c.BLPop(ctx, 0, "{q}:jobs").Result()
		if err != nil {
			v = []string{err.Error()}
		}
		popped <- v
	}()
	eventually(t, "BLPOP blocked on its server", func() bool { return redisStateOf(s.testPool("p")).blocking.Load() == 1 })
	if err := c.Set(ctx, "other", "1", 0).Err(); err != nil {
		t.Fatalf("a request while BLPOP waits: %v", err)
	}
	if err := c.RPush(ctx, "{q}:jobs", "j1").Err(); err != nil {
		t.Fatal(err)
	}
	if v := <-popped; len(v) != 2 || v[0] != "{q}:jobs" || v[1] != "j1" {
		t.Fatalf("BLPOP: %q", v)
	}
	if _, err := c.BLPop(ctx, time.Second, "{q}:empty").Result(); !errors.Is(err, goredis.Nil) {
		t.Errorf("BLPOP past its timeout: %v, want nil", err)
	}
	c.RPush(ctx, "{q}:a", "x", "y")
	if v, err := c.BLMove(ctx, "{q}:a", "{q}:b", "LEFT", "RIGHT", time.Second).Result(); err != nil || v != "x" {
		t.Errorf("BLMOVE: %q %v", v, err)
	}
	if v, err := c.BRPopLPush(ctx, "{q}:a", "{q}:b", time.Second).Result(); err != nil || v != "y" {
		t.Errorf("BRPOPLPUSH: %q %v", v, err)
	}
	c.ZAdd(ctx, "{q}:z", goredis.Z{Score: 2, Member: "two"}, goredis.Z{Score: 1, Member: "one"})
	if v, err := c.BZPopMin(ctx, time.Second, "{q}:z").Result(); err != nil || v.Member != "one" {
		t.Errorf("BZPOPMIN: %v %v", v, err)
	}
	a, b := keysApart(t, s.testPool("p"))
	if err := c.BLPop(ctx, time.Second, a, b).Err(); err == nil || !strings.Contains(err.Error(), "a blocking command's keys must all be on one server") {
		t.Errorf("BLPOP over two servers: %v", err)
	}
}

// TestRedisBlockingBounded: with redis_blocking_connections 2, a third
// blocking command is refused naming the setting while two wait; a client
// that closes while its BLPOP waits releases its place and its server
// connection, so that a value pushed then goes to the client still
// waiting and the next stays in the list, popped for nobody.
func TestRedisBlockingBounded(t *testing.T) {
	r := startRedis(t, 0)
	s := startProxy(t, redisPoolYAML("  redis_blocking_connections: 2\n", r))
	p := s.testPool("p")
	first, second := dialRedis(t, s.Addr("p").String()), dialRedis(t, s.Addr("p").String())
	first.send("BLPOP", "q", "0")
	_ = first.w.Flush()
	second.send("BLPOP", "q", "0")
	_ = second.w.Flush()
	eventually(t, "two BLPOPs waiting", func() bool { return redisStateOf(p).blocking.Load() == 2 })
	third := dialRedis(t, s.Addr("p").String())
	if got := third.do("BLPOP", "q", "0"); !strings.HasPrefix(got, "-ERR 'blpop' would be blocking command 3 of the pool, over redis_blocking_connections 2") {
		t.Fatalf("a third BLPOP: %q", got)
	}
	first.conn.Close()
	eventually(t, "the closed client's BLPOP released", func() bool { return redisStateOf(p).blocking.Load() == 1 })
	direct := dialRedis(t, r.addr)
	eventually(t, "one client blocked on the server", func() bool {
		return strings.Contains(direct.do("INFO", "clients"), "blocked_clients:1\r\n")
	})
	if got := third.do("RPUSH", "q", "v1", "v2"); got != ":2\r\n" {
		t.Fatalf("RPUSH: %q", got)
	}
	if got, err := second.read(); err != nil || got != "*2\r\n$1\r\nq\r\n$2\r\nv1\r\n" {
		t.Fatalf("the waiting BLPOP: %q %v", got, err)
	}
	if got := third.do("LRANGE", "q", "0", "-1"); got != "*1\r\n$2\r\nv2\r\n" {
		t.Errorf("the list after: %q", got)
	}
}

// TestRedisBlockingConfig: redis_blocking_connections is refused in a
// memcached pool and when negative.
func TestRedisBlockingConfig(t *testing.T) {
	for yaml, want := range map[string]string{
		"  redis_blocking_connections: 5\n  servers: [\"127.0.0.1:11211:1 a\"]\n":                "applies to Redis pools only",
		"  redis: true\n  redis_blocking_connections: -1\n  servers: [\"127.0.0.1:6379:1 a\"]\n": "must not be negative",
	} {
		if _, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:22121\n" + yaml)); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "redis_blocking_connections") {
			t.Errorf("%s: %v, want an error on redis_blocking_connections saying %q", yaml, err, want)
		}
	}
}
