package proxy

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// TestRedisPoolFollowsFile: a Redis pool takes its servers from a
// membership source as a memcached pool does, and places keys on the
// servers the admin endpoint names.
func TestRedisPoolFollowsFile(t *testing.T) {
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	path := filepath.Join(t.TempDir(), "members.yml")
	writeServers(t, path, &memcached{addr: rs[0].addr}, &memcached{addr: rs[1].addr})
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  redis: true\n  distribution: ring\n  timeout: 10000\n"+
		"  servers: [\""+rs[0].addr+":1 static\"]\n  membership: {file: {path: "+path+", interval: 20, settle: 40}}\n")
	eventually(t, "the file's servers served", func() bool {
		return slices.Equal(membershipOf(t, s, "p").Nodes, []string{"n0", "n1"})
	})
	c := dialRedis(t, s.Addr("p").String())
	byName := map[string]*redisServer{"n0": rs[0], "n1": rs[1]}
	seen := map[string]bool{}
	for i := range 40 {
		k := fmt.Sprintf("user:%d", i)
		if got := c.do("SET", k, "v"); got != "+OK\r\n" {
			t.Fatalf("SET %s: %q", k, got)
		}
		var locs []Location
		adminGet(t, s, "/v1/pools/p/locate?key="+urlKey(k), "", &locs)
		owner := locs[0].Servers[0].Name
		seen[owner] = true
		if got := dialRedis(t, byName[owner].addr).do("GET", k); got != "$1\r\nv\r\n" {
			t.Errorf("%s: the admin endpoint says %s, which answers GET with %q", k, owner, got)
		}
	}
	if len(seen) != 2 {
		t.Errorf("keys placed on %v, want both servers of the file", seen)
	}
}

// TestRedisServerAuthFollowsSource: in a Redis pool on a membership
// source, redis_server_auth may name a server the source does not list
// yet, or any more: each such version is served, and the password is
// given to the server once the source lists it. The static list names it,
// so the configuration is valid as it is; its source's versions are
// served whether they list it or not.
func TestRedisServerAuthFollowsSource(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0, "--requirepass", "two")}
	path := filepath.Join(t.TempDir(), "members.yml")
	writeServers(t, path, &memcached{addr: rs[0].addr})
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  redis: true\n  distribution: ring\n  timeout: 10000\n"+
		"  redis_server_auth: {n1: two}\n  servers: [\""+rs[1].addr+":1 n1\"]\n"+
		"  membership: {file: {path: "+path+", interval: 20, settle: 40}}\n")
	served := func(what string, nodes ...string) {
		t.Helper()
		eventually(t, what, func() bool {
			ms := membershipOf(t, s, "p")
			return slices.Equal(ms.Nodes, nodes) && !ms.Stale
		})
	}
	served("a version without n1 served", "n0")
	writeServers(t, path, &memcached{addr: rs[0].addr}, &memcached{addr: rs[1].addr})
	served("n1 served", "n0", "n1")
	c := dialRedis(t, s.Addr("p").String())
	for i := range 40 {
		if got := c.do("SET", fmt.Sprint("user:", i), "v"); got != "+OK\r\n" {
			t.Fatalf("SET user:%d: %q", i, got)
		}
	}
	direct := dialRedis(t, rs[1].addr)
	if got := direct.do("AUTH", "two"); got != "+OK\r\n" {
		t.Fatalf("AUTH on n1: %q", got)
	}
	if got := direct.do("DBSIZE"); got == ":0\r\n" {
		t.Errorf("n1 holds no key of 40: %q", got)
	}
	writeServers(t, path, &memcached{addr: rs[0].addr})
	served("a version without n1 served again", "n0")
}
