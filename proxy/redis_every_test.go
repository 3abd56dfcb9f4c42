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
