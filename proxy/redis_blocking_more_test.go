package proxy

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	goredis "github.com/redis/go-redis/v9"
)

// TestRedisBlockingStreamsAndMPop: BLMPOP, BZMPOP, XREAD BLOCK and
// XREADGROUP BLOCK through go-redis v9 over three servers, keys of one
// hash tag: an XREAD BLOCK 0 waits until another client adds to the
// stream, XREADGROUP BLOCK reads the group's new entries, each of them
// past its timeout gets nil, and XREAD without BLOCK reads at once on the
// shared connections.
func TestRedisBlockingStreamsAndMPop(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	s := startProxy(t, redisPoolYAML("  hash_tag: \"{}\"\n", rs...))
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr("p").String(), PoolSize: 4})
	defer c.Close()

	// The XREAD's outcome comes back on read, not through t: if the test
	// gives up on it, c.Close ends the XREAD after the test has returned,
	// when t may no longer be used.
	type xread struct {
		v   []goredis.XStream
		err error
	}
	read := make(chan xread, 1)
	go func() {
		v, err := c.XRead(ctx, &goredis.XReadArgs{Streams: []string{"{s}a", "{s}b", "$", "$"}, Block: 0}).Result()
		read <- xread{v, err}
	}()
	// The proxy counts the XREAD as blocking before its server has read it:
	// an XADD that reached the server first would be older than "$", and
	// the XREAD would wait for good. So wait for the server to block it.
	direct := []*rc{dialRedis(t, rs[0].addr), dialRedis(t, rs[1].addr), dialRedis(t, rs[2].addr)}
	eventually(t, "XREAD blocked on its server", func() bool { return blockedClients(direct) == 1 })
	if err := c.XAdd(ctx, &goredis.XAddArgs{Stream: "{s}b", ID: "1-1", Values: []string{"f", "v"}}).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-read:
		if v := r.v; r.err != nil || len(v) != 1 || v[0].Stream != "{s}b" || v[0].Messages[0].ID != "1-1" {
			t.Fatalf("XREAD BLOCK 0 woken by XADD: %+v %v", v, r.err)
		}
	case <-time.After(realprog.Patience):
		t.Fatal("XREAD BLOCK 0 not woken by XADD")
	}
	if _, err := c.XRead(ctx, &goredis.XReadArgs{Streams: []string{"{s}a", "$"}, Block: 20 * time.Millisecond}).Result(); !errors.Is(err, goredis.Nil) {
		t.Errorf("XREAD BLOCK 20 on nothing new: %v, want nil", err)
	}
	if v, err := c.XRead(ctx, &goredis.XReadArgs{Streams: []string{"{s}b", "0"}, Count: 1}).Result(); err != nil || v[0].Messages[0].ID != "1-1" {
		t.Errorf("XREAD without BLOCK: %+v %v", v, err)
	}
	if err := c.XGroupCreate(ctx, "{s}b", "g", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.XReadGroup(ctx, &goredis.XReadGroupArgs{Group: "g", Consumer: "c1", Streams: []string{"{s}b", ">"}, Block: time.Second}).Result(); err != nil || v[0].Messages[0].ID != "1-1" {
		t.Errorf("XREADGROUP BLOCK: %+v %v", v, err)
	}
	if _, err := c.XReadGroup(ctx, &goredis.XReadGroupArgs{Group: "g", Consumer: "c1", Streams: []string{"{s}b", ">"}, Block: 20 * time.Millisecond}).Result(); !errors.Is(err, goredis.Nil) {
		t.Errorf("XREADGROUP BLOCK 20 with nothing new: %v, want nil", err)
	}

	c.RPush(ctx, "{m}b", "x", "y")
	if key, v, err := c.BLMPop(ctx, time.Second, "left", 2, "{m}a", "{m}b").Result(); err != nil || key != "{m}b" || len(v) != 2 {
		t.Errorf("BLMPOP: %q %q %v", key, v, err)
	}
	if _, _, err := c.BLMPop(ctx, 20*time.Millisecond, "left", 1, "{m}a").Result(); !errors.Is(err, goredis.Nil) {
		t.Errorf("BLMPOP past its timeout: %v, want nil", err)
	}
	c.ZAdd(ctx, "{m}z", goredis.Z{Score: 1, Member: "one"})
	if key, v, err := c.BZMPop(ctx, time.Second, "min", 1, "{m}z").Result(); err != nil || key != "{m}z" || v[0].Member != "one" {
		t.Errorf("BZMPOP: %q %v %v", key, v, err)
	}
	if got := dialRedis(t, s.Addr("p").String()).do("XREAD", "STREAMS", "{s}a", "{s}b", "0"); got != "-ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.\r\n" {
		t.Errorf("XREAD with two keys and one ID: %q, want the server's error", got)
	}
}

// blockedClients is how many clients the servers behind conns say they
// block.
func blockedClients(conns []*rc) int {
	n := 0
	for _, c := range conns {
		if _, v, ok := strings.Cut(c.do("INFO", "clients"), "blocked_clients:"); ok {
			v, _, _ = strings.Cut(v, "\r\n")
			b, _ := strconv.Atoi(v)
			n += b
		}
	}
	return n
}
