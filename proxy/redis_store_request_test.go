package proxy

import (
	"syscall"
	"testing"
	"time"
)

// TestRequestMigrateHoldsItsSourceNoLongerThanTheRequest: a SET of a key
// the store's move has yet to move sends its key's MIGRATE first, which
// blocks the old server until the new one answers. With the new server
// stopped - as one in a MIGRATE of its own to the old server answers
// nothing - the request gives up at its deadline (timeout: 500), and the
// old server must answer again then, not at migrate_timeout (5000).
func TestRequestMigrateHoldsItsSourceNoLongerThanTheRequest(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	later := laterHours()
	yaml := func(servers ...*redisServer) string {
		return redisPoolYAML("  distribution: ring\n  timeout: 500\n  store: {enabled: true, migrate_timeout: 5000, hours: \""+later+"\"}\n", servers...)
	}
	s := startProxy(t, yaml(rs[0]))
	c := dialRedis(t, s.Addr("p").String())
	keys := testKeys("hold", 200)
	pipeline(t, c, len(keys), func(i int) []string { return []string{"SET", keys[i], "v"} })
	reload(t, s, yaml(rs...))
	key := ""
	for i, owner := range routeNames(s.testPool("p"), keys) {
		if owner == "r1" {
			key = keys[i]
			break
		}
	}
	if key == "" {
		t.Fatal("no key moves to r1")
	}
	if err := rs[1].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rs[1].cmd.Process.Signal(syscall.SIGCONT) })
	sent := time.Now()
	got := c.do("SET", key, "w")
	answered := time.Since(sent)
	old := dialRedis(t, rs[0].addr)
	pinged := time.Now()
	if pong := old.do("PING"); pong != "+PONG\r\n" {
		t.Fatalf("PING the old server: %q", pong)
	}
	waited := time.Since(pinged)
	t.Logf("SET of a moving key with its new server stopped: %q after %v; the old server answered a PING %v later",
		got, answered.Round(time.Millisecond), waited.Round(time.Millisecond))
	// A MIGRATE that waited its 5 s would hold the old server about
	// 4.5 s past the request's answer; 2 s is the machine's room.
	if waited > 2*time.Second {
		t.Errorf("the old server answered nothing for %v after the request gave up: its MIGRATE waited longer than the request", waited.Round(time.Millisecond))
	}
}
