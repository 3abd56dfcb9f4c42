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
