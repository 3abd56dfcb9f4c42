package proxy

import (
	"fmt"
	"strings"
	"testing"
)

// TestRedisKeyspaceAndInfo: RANDOMKEY over three servers finds keys of
// every server that holds some, and the null in an empty pool; FLUSHDB and FLUSHALL are
// refused without flush_all: broadcast and empty every server's database
// of the pool with it, leaving the servers' other databases; INFO gives
// the proxy's own sections and the servers' merged: the keys of every
// server in db0, used_memory summed, loading:0, cluster_enabled.
func TestRedisKeyspaceAndInfo(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	refusing := startProxy(t, redisPoolYAML("  redis_db: 1\n", rs...))
	s := startProxy(t, redisPoolYAML("  redis_db: 1\n  flush_all: broadcast\n", rs...))
	c := dialRedis(t, s.Addr("p").String())
	if got := c.do("RANDOMKEY"); got != "$-1\r\n" {
		t.Errorf("RANDOMKEY of an empty pool: %q", got)
	}
	c.do("HELLO", "3")
	if got := c.do("RANDOMKEY"); got != "_\r\n" {
		t.Errorf("RANDOMKEY of an empty pool in RESP3: %q", got)
	}
	c.do("HELLO", "2")
	for i := range 60 {
		c.do("SET", fmt.Sprint("k", i), "v")
	}
	other := dialRedis(t, rs[0].addr) // database 0, not the pool's
	other.do("SET", "elsewhere", "1")
	p := s.testPool("p")
	holding := map[string]bool{} // the servers that hold keys
	for i := range 60 {
		holding[ownerOf(p, fmt.Sprint("k", i))] = true
	}
	found := map[string]bool{}
	for range 200 {
		key := c.do("RANDOMKEY")
		name := strings.Split(key, "\r\n")[1]
		if !strings.HasPrefix(name, "k") {
			t.Fatalf("RANDOMKEY: %q", key)
		}
		found[ownerOf(p, name)] = true
	}
	if len(holding) < 2 || len(found) != len(holding) {
		t.Errorf("200 RANDOMKEYs found keys of %d servers, %d hold keys", len(found), len(holding))
	}
	info := c.do("INFO")
	for _, want := range []string{"# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\nproxy:kolco\r\n",
		"connected_clients:1\r\n", "loading:0\r\n", "role:master\r\n", "cluster_enabled:0\r\n", "\r\ndb0:keys=60,expires=0,avg_ttl=0\r\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO lacks %q:\n%s", want, info)
		}
	}
	if strings.Contains(info, "# CPU") || strings.Contains(info, "db1:") {
		t.Errorf("INFO gives a server's own section or the servers' database name:\n%s", info)
	}
	if got := c.do("INFO", "keyspace"); got != "$45\r\n# Keyspace\r\ndb0:keys=60,expires=0,avg_ttl=0\r\n\r\n" {
		t.Errorf("INFO keyspace: %q", got)
	}
	if got := dialRedis(t, refusing.Addr("p").String()).do("FLUSHALL"); !strings.HasPrefix(got, "-ERR 'flushall' is not supported by the proxy: commands over the whole keyspace") {
		t.Errorf("FLUSHALL without flush_all: broadcast: %q", got)
	}
	if got := c.do("FLUSHALL", "ASYNC"); got != "+OK\r\n" {
		t.Fatalf("FLUSHALL ASYNC: %q", got)
	}
	if got := c.do("DBSIZE"); got != ":0\r\n" {
		t.Errorf("DBSIZE after FLUSHALL: %q", got)
	}
	if got := other.do("GET", "elsewhere"); got != "$1\r\n1\r\n" {
		t.Errorf("a key of the servers' other database after FLUSHALL: %q, want it kept", got)
	}
	if got := c.do("FLUSHDB", "NOW"); got != "-ERR syntax error\r\n" {
		t.Errorf("FLUSHDB NOW: %q", got)
	}
}
