package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
	goredis "github.com/redis/go-redis/v9"
)

// redisAuthPool starts two servers with passwords of their own behind a
// pool whose clients give the proxy's password, "pw".
func redisAuthPool(t *testing.T) (*Server, []*redisServer) {
	rs := []*redisServer{startRedis(t, 0, "--requirepass", "one"), startRedis(t, 0, "--requirepass", "two")}
	s := startProxy(t, redisPoolYAML("  hash_tag: \"{}\"\n  redis_client_auth: pw\n  redis_server_auth: {r0: one, r1: two}\n", rs...))
	return s, rs
}

// TestGoRedisThroughProxy runs go-redis v9 asking for RESP3 (HELLO 3
// with AUTH, then CLIENT SETINFO on every connection) through a pool
// with a password of its own over servers with passwords of theirs: its
// commands, pipelines and scripts work, and its one connection is never
// dropped.
func TestGoRedisThroughProxy(t *testing.T) {
	s, _ := redisAuthPool(t)
	ctx := context.Background()
	var dials, dropped atomic.Int32
	dialer := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		return &eofConn{Conn: c, eof: &dropped}, err
	}
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr("p").String(), Password: "pw", Protocol: 3, PoolSize: 1, Dialer: dialer})
	defer c.Close()
	for i := range 50 {
		k := fmt.Sprint("go:", i)
		if err := c.Set(ctx, k, i, 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}
	keys := make([]string, 50)
	for i := range keys {
		keys[i] = fmt.Sprint("go:", i)
	}
	vals, err := c.MGet(ctx, keys...).Result()
	if err != nil || len(vals) != len(keys) || vals[0] != "0" || vals[49] != "49" {
		t.Fatalf("MGET: %v, %v", vals, err)
	}
	cmds, err := c.Pipelined(ctx, func(p goredis.Pipeliner) error {
		p.HSet(ctx, "go:h", "f", "v")
		p.Incr(ctx, "go:n")
		p.SAdd(ctx, "{go}a", "x")
		p.SAdd(ctx, "{go}b", "x")
		p.SInter(ctx, "{go}a", "{go}b")
		p.Eval(ctx, "return redis.call('get', KEYS[1])", []string{"go:7"})
		return nil
	})
	if err != nil {
		t.Fatalf("pipeline: %v (%v)", err, cmds)
	}
	if got := cmds[4].(*goredis.StringSliceCmd).Val(); len(got) != 1 || got[0] != "x" {
		t.Errorf("SINTER: %v", got)
	}
	if got, err := c.Del(ctx, keys...).Result(); err != nil || got != 50 {
		t.Errorf("DEL: %d, %v", got, err)
	}
	if err := c.Do(ctx, "CLUSTER", "INFO").Err(); err == nil {
		t.Error("CLUSTER INFO succeeded")
	}
	if got, err := c.Ping(ctx).Result(); err != nil || got != "PONG" {
		t.Fatalf("PING after a refusal: %q, %v", got, err)
	}
	c.Close()
	if n := dropped.Load(); n != 0 {
		t.Errorf("the proxy closed %d of the client's %d connections: an error must not cost it its connection", n, dials.Load())
	}
}

// eofConn counts the reads that find the connection closed by the other
// end.
type eofConn struct {
	net.Conn
	eof *atomic.Int32
}

func (c *eofConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if errors.Is(err, io.EOF) {
		c.eof.Add(1)
	}
	return n, err
}

// TestRedisCLIThroughProxy runs redis-cli's commands, its --pipe mass
// insertion (which ends with an ECHO), DBSIZE over every server and its
// refusals through the proxy.
func TestRedisCLIThroughProxy(t *testing.T) {
	t.Parallel()
	bin := realprog.Binary(t, "redis-tools", "redis-cli")
	s, rs := redisAuthPool(t)
	host, p, err := net.SplitHostPort(s.Addr("p").String())
	if err != nil {
		t.Fatal(err)
	}
	count := strings.Trim(dialServer(t, rs[0], "one").do("COMMAND", "COUNT"), ":\r\n")
	cli := func(stdin string, args ...string) string {
		cmd := exec.Command(bin, append([]string{"-h", host, "-p", p, "-a", "pw", "--no-auth-warning"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := testproc.CombinedOutput(cmd)
		if err != nil {
			t.Fatalf("redis-cli %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if got := cli("SET a 1\nGET a\nMGET a nope\nCOMMAND COUNT\nPING hi\n"); got != "OK\n1\n1\n\n"+count+"\nhi\n" {
		t.Errorf("commands: %q", got)
	}
	var mass strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&mass, "*3\r\n$3\r\nSET\r\n$%d\r\ncli:%d\r\n$1\r\nv\r\n", len(fmt.Sprint("cli:", i)), i)
	}
	if got := cli(mass.String(), "--pipe"); !strings.Contains(got, "errors: 0, replies: 1000") {
		t.Errorf("--pipe: %q", got)
	}
	if got := cli("", "DBSIZE"); got != "1001\n" {
		t.Errorf("DBSIZE over both servers: %q", got)
	}
	if got := cli("", "WAIT", "0", "0"); !strings.HasPrefix(got, "ERR ") {
		t.Errorf("WAIT: %q, want the proxy's refusal", got)
	}
	if got := cli("", "GET", "a"); got != "1\n" {
		t.Errorf("GET after a refusal: %q", got)
	}
}

// TestRedisBenchmarkThroughProxy runs redis-benchmark's tests of every
// data type, pipelined and not, and a 10-key MGET of its custom-command
// mode, through a pool with passwords: redis-benchmark stops at the
// first error reply, so a run that completes met none.
func TestRedisBenchmarkThroughProxy(t *testing.T) {
	t.Parallel()
	bin := realprog.Binary(t, "redis-tools", "redis-benchmark")
	s, _ := redisAuthPool(t)
	host, port, err := net.SplitHostPort(s.Addr("p").String())
	if err != nil {
		t.Fatal(err)
	}
	mget := []string{"MGET"}
	for i := range 10 {
		mget = append(mget, fmt.Sprintf("key:%d:__rand_int__", i))
	}
	tests := "ping,set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange_100,mset"
	for _, run := range []struct {
		name string
		args []string
		want int // result lines
	}{
		{"tests", []string{"-t", tests}, 17},
		{"tests pipelined", []string{"-t", tests, "-P", "16"}, 17},
		{"MGET of 10 keys", mget, 1},
		{"MGET of 10 keys pipelined", append([]string{"-P", "16"}, mget...), 1},
	} {
		t.Run(run.name, func(t *testing.T) {
			args := append([]string{"-h", host, "-p", port, "-a", "pw", "-n", "2000", "-c", "8", "-r", "1000", "-q"}, run.args...)
			out, err := testproc.CombinedOutput(exec.Command(bin, args...))
			if err != nil {
				t.Fatalf("redis-benchmark %q: %v\n%s", run.args, err, out)
			}
			if n := strings.Count(string(out), "requests per second"); n != run.want {
				t.Fatalf("%d results, want %d:\n%s", n, run.want, out)
			}
		})
	}
}
