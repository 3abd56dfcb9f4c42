package proxy

import (
	"strings"
	"testing"
)

// TestReturnSettlesNoCopyTheOutageNeverWrote: a server's key written to
// a stand-in while the server is out, and that stand-in out too when the
// server returns. The key is read now from a third server, which no write
// of the outage reached, and whose copy may be older than anything: here
// a copy of before, as a change leaves behind on the key's former server.
// Before, the return copied that copy onto the server, which served it;
// with the copy not taken, the return's migration window read it at the
// third server on the server's miss, and copied it over. Now the return
// removes the key from the server and from the third server: a miss,
// never an older value. A fault schedule's seed 111 (memcached, rehash,
// bounded, a file source) read, 44 ms after a server's return, a value 7 s
// older than one acknowledged while two servers were out and the source
// removed a third - this case, as far as its log tells.
func TestReturnSettlesNoCopyTheOutageNeverWrote(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	s, logs := startProxyLogged(t, poolYAML("  distribution: ring\n  auto_eject_hosts: true\n  timeout: 300\n  server_failure_limit: 1\n"+
		"  server_retry_timeout: 200\n  health_check: {interval: 50, timeout: 300}\n", ms...))
	c := dial(t, s.Addr("p").String())
	const key = "k:settle"
	// The key's servers in preference order: its owner a, the stand-in c
	// the write goes to, and d, which stands in once both are out.
	pl := s.testPool("p").place.Load()
	nodes, err := pl.kolco.p.LocateN(nil, key, 3)
	if err != nil {
		t.Fatal(err)
	}
	byAddr := map[string]*memcached{}
	for _, m := range ms {
		byAddr[m.addr] = m
	}
	var order []*backend
	for _, n := range nodes {
		order = append(order, pl.servers[pl.kolco.lay.index(n.ID)])
	}
	a, cIn, d := byAddr[order[0].addr], byAddr[order[1].addr], byAddr[order[2].addr]
	setValue(c, key, "before", 0, 0)
	dialDirect(t, d).set(key, "left-behind") // a copy of before, older than any write below

	contA := sigstopUntil(t, a.cmd.Process)
	eventually(t, "the owner marked down", func() bool {
		c.do("get " + key + "\r\n") // fails at the owner, which is then marked down
		return order[0].health.isDown()
	})
	setValue(c, key, "during", 0, 0) // to the stand-in c, noted in the owner's outage
	sigstop(t, cIn.cmd.Process)
	eventually(t, "the stand-in marked down", func() bool {
		c.do("get " + key + "\r\n") // fails at the stand-in
		return order[1].health.isDown()
	})
	contA()
	eventually(t, "the owner restored", func() bool { return !order[0].health.isDown() })
	if got := c.do("get " + key + "\r\n"); strings.Contains(got, "before") || strings.Contains(got, "left-behind") {
		t.Errorf("get %s once its owner is back, its write acknowledged on a stand-in still out: %q, want a miss or \"during\"", key, got)
	}
	if it, ok := dialDirect(t, a).get(key); ok && it.value != "during" {
		t.Errorf("the owner holds %q for %s once back, older than \"during\"; log:\n%s", it.value, key, logs.String())
	}
}
