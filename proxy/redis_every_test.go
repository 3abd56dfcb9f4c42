package proxy

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
	goredis "github.com/redis/go-redis/v9"
)

// TestRedisScanOverServers: through a pool of three servers, go-redis's
// Scan iterator (with MATCH and COUNT) and redis-cli --scan list every key
// once, KEYS lists them, and DBSIZE counts them, as one server holding
// them all would.
func TestRedisScanOverServers(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	s := startProxy(t, redisPoolYAML("", rs...))
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr("p").String()})
	defer c.Close()
	const n = 1000
	var want []string
	for i := range n {
		k := fmt.Sprint("scan:", i)
		want = append(want, k)
		if err := c.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	c.Set(ctx, "other", "v", 0)
	slices.Sort(want)
	var got []string
	it := c.Scan(ctx, 0, "scan:*", 37).Iterator()
	for it.Next(ctx) {
		got = append(got, it.Val())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("SCAN listed %d keys (%d distinct of %d)", len(got), len(slices.Compact(slices.Clone(got))), n)
	}
	keys, err := c.Keys(ctx, "scan:*").Result()
	slices.Sort(keys)
	if err != nil || !slices.Equal(keys, want) {
		t.Errorf("KEYS: %d keys, %v", len(keys), err)
	}
	if got, err := c.DBSize(ctx).Result(); err != nil || got != n+1 {
		t.Errorf("DBSIZE: %d %v", got, err)
	}
	host, port, _ := strings.Cut(s.Addr("p").String(), ":")
	out, err := testproc.Output(exec.Command(realprog.Binary(t, "redis-tools", "redis-cli"), "-h", host, "-p", port, "--scan", "--pattern", "scan:*"))
	if err != nil {
		t.Fatal(err)
	}
	cli := strings.Fields(string(out))
	slices.Sort(cli)
	if !slices.Equal(cli, want) {
		t.Errorf("redis-cli --scan listed %d keys", len(cli))
	}
	if got := dialRedis(t, s.Addr("p").String()).do("SCAN", "x"); got != "-ERR invalid cursor\r\n" {
		t.Errorf("SCAN x: %q", got)
	}
}

// TestRedisScriptsOnEveryServer: a script go-redis loads through the
// proxy runs with EVALSHA on keys of every server, SCRIPT EXISTS says so,
// and after SCRIPT FLUSH every server answers NOSCRIPT.
func TestRedisScriptsOnEveryServer(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	s := startProxy(t, redisPoolYAML("", rs...))
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr("p").String()})
	defer c.Close()
	sha, err := c.ScriptLoad(ctx, "return redis.call('incr', KEYS[1])").Result()
	if err != nil {
		t.Fatal(err)
	}
	servers := map[string]bool{}
	for i := range 100 {
		k := fmt.Sprintf("c%dx", i*7919)
		servers[ownerOf(s.testPool("p"), k)] = true
		if got, err := c.EvalSha(ctx, sha, []string{k}).Int(); err != nil || got != 1 {
			t.Fatalf("EVALSHA on %s: %d %v", k, got, err)
		}
	}
	if len(servers) != len(rs) {
		t.Fatalf("the keys reached %d of %d servers", len(servers), len(rs))
	}
	if got, err := c.ScriptExists(ctx, sha, "0000000000000000000000000000000000000000").Result(); err != nil || !slices.Equal(got, []bool{true, false}) {
		t.Errorf("SCRIPT EXISTS: %v %v", got, err)
	}
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := c.EvalSha(ctx, sha, []string{fmt.Sprintf("c%dx", i*7919)}).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
			t.Fatalf("EVALSHA after SCRIPT FLUSH: %v", err)
		}
	}
	if got := dialRedis(t, s.Addr("p").String()).do("SCRIPT", "KILL"); !strings.Contains(got, "is not supported by the proxy") {
		t.Errorf("SCRIPT KILL: %q", got)
	}
}
