package proxy

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// storeYAML returns a Redis store pool over servers.
func storeYAML(dist string, servers []*redisServer, extra string) string {
	return redisPoolYAML("  distribution: "+dist+"\n  store: {enabled: true}\n"+extra, servers...)
}

// TestStoreMovesKeys: a store of four servers that gets a fifth, then
// loses it, moves every key whose owner changed: each key written before
// is read back through the proxy after each change, with its TTL, and is
// on the server the placement names and on no other (checked on the
// servers themselves). ketama and ring.
func TestStoreMovesKeys(t *testing.T) {
	for _, dist := range []string{"ketama", "ring"} {
		t.Run(dist, func(t *testing.T) {
			t.Parallel()
			rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
			extra := ""
			if dist == "ketama" {
				extra = "  hash: fnv1a_64\n"
			}
			s := startProxy(t, storeYAML(dist, rs[:4], extra))
			c := dialRedis(t, s.Addr("p").String())
			const n = 2000
			for i := range n {
				if got := c.do("SET", fmt.Sprintf("k:%d", i), fmt.Sprint("v", i)); got != "+OK\r\n" {
					t.Fatal(got)
				}
			}
			c.do("SET", "ttl", "x", "EX", "1000")
			setAt := time.Now()
			for _, servers := range [][]*redisServer{rs, rs[:4]} {
				reload(t, s, storeYAML(dist, servers, extra))
				for i := range n {
					if got := c.do("GET", fmt.Sprintf("k:%d", i)); !strings.HasSuffix(got, fmt.Sprint("v", i, "\r\n")) {
						t.Fatalf("after the change k:%d reads %q", i, got)
					}
				}
				var ttl int
				if _, err := fmt.Sscanf(c.do("PTTL", "ttl"), ":%d", &ttl); err != nil {
					t.Fatal(err)
				}
				if want := 1000*time.Second - time.Since(setAt); (time.Duration(ttl)*time.Millisecond - want).Abs() > time.Second {
					t.Errorf("PTTL after the move %d ms, want %v", ttl, want)
				}
				p := s.testPool("p")
				eventually(t, "the mover done", func() bool { return p.place.Load().move == nil })
				checkStoreKeys(t, p, rs, n)
			}
		})
	}
}

// checkStoreKeys checks on the servers that each key k:0..n-1 is on the
// server the pool's placement names and on no other of all.
func checkStoreKeys(t *testing.T, p *pool, all []*redisServer, n int) {
	t.Helper()
	direct := map[string]*rc{}
	for _, r := range all {
		direct[r.addr] = dialRedis(t, r.addr)
	}
	wrong := 0
	for i := range n {
		k := fmt.Sprintf("k:%d", i)
		owner := ownerOf(p, k)
		for addr, c := range direct {
			has := c.do("EXISTS", k) == ":1\r\n"
			if has != (addr == owner) && wrong < 5 {
				t.Errorf("%s on %s: %v; its server is %s", k, addr, has, owner)
			}
			if has != (addr == owner) {
				wrong++
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d keys misplaced", wrong)
	}
}
