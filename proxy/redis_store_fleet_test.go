package proxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/internal/faults"
)

// TestStoreMoveWaitsForAPeersReplacedPool: a store's move opens only once
// no proxy of the fleet has requests in flight routed by the placement
// before the change, its own or a peer's. A fault schedule (the long
// run's seed 19: a Redis store, modula, three proxies reloaded for a
// server removed) read nil for a key that held 246, then INCR gave 247: a
// peer reported the new placement as soon as its reload swapped its pool
// in, while the pool it replaced still had a GET in flight to the key's
// old server, and the other proxy's move sent the key away before the GET
// got there. Here proxy B reaches the servers through relays that hold
// its GETs; B, then A, drop r2; A's move may not send a key away until
// B's GETs are answered, and each reads its value.
func TestStoreMoveWaitsForAPeersReplacedPool(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	relays := relaysTo(t, rs)
	adminA, adminB := freePort(t), freePort(t)
	yaml := storeFleetYAML
	direct := []string{rs[0].addr, rs[1].addr, rs[2].addr}
	relayed := []string{relays[0].Addr, relays[1].Addr, relays[2].Addr}
	a := startProxy(t, yaml(adminA, adminB, direct, 3))
	b := startProxy(t, yaml(adminB, adminA, relayed, 3))
	const n = 20
	key := func(i int) string { return fmt.Sprintf("k:%d", i) }
	ca := dialRedis(t, a.Addr("p").String())
	for i := range n {
		if got := ca.do("SET", key(i), fmt.Sprint("v", i)); got != "+OK\r\n" {
			t.Fatalf("SET: %q", got)
		}
	}
	before := make([]string, n)
	for i := range n {
		before[i] = ownerOf(a.testPool("p"), key(i))
	}

	for _, rl := range relays {
		rl.Stall()
	}
	old := b.testPool("p")
	var clients []*rc
	for i := range n {
		c := dialRedis(t, b.Addr("p").String())
		c.send("GET", key(i))
		if err := c.w.Flush(); err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	eventually(t, "B's GETs in flight", func() bool { return old.requests.refs.Load() == n })
	reload(t, b, yaml(adminB, adminA, relayed, 2))
	reload(t, a, yaml(adminA, adminB, direct, 2))
	moving := 0
	for i := range n {
		if ownerOf(a.testPool("p"), key(i)) != before[i] {
			moving++
		}
	}
	if moving == 0 {
		t.Fatal("no key changes owner: the test shows nothing")
	}
	pa := a.testPool("p")
	eventually(t, "A's move done, or waiting for B's replaced pool", func() bool {
		m := moveOf(pa.place.Load())
		if m == nil {
			return true
		}
		why := m.stats.waiting.Load()
		return why != nil && strings.HasPrefix(*why, "retiring")
	})
	for _, rl := range relays {
		rl.Heal()
	}
	stale := 0
	for i, c := range clients {
		if got, err := c.read(); err != nil || !strings.HasSuffix(got, fmt.Sprint("v", i, "\r\n")) {
			stale++
			t.Logf("GET %s sent before the change: %q %v", key(i), got, err)
		}
	}
	if stale > 0 {
		t.Errorf("%d of %d GETs in flight in B's replaced pool did not read their key's value (%d keys change owner)", stale, n, moving)
	}
	cb := dialRedis(t, b.Addr("p").String())
	for i := range n {
		for _, c := range []*rc{ca, cb} {
			if got := c.do("GET", key(i)); !strings.HasSuffix(got, fmt.Sprint("v", i, "\r\n")) {
				t.Errorf("after the move %s reads %q", key(i), got)
			}
		}
	}
}

// relaysTo starts a relay to each of rs; they close with the test.
func relaysTo(t *testing.T, rs []*redisServer) []*faults.Relay {
	var relays []*faults.Relay
	for _, r := range rs {
		rl, err := faults.NewRelay(r.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(rl.Close)
		relays = append(relays, rl)
	}
	return relays
}

// storeFleetYAML is a proxy of a fleet of two, its admin endpoint at port
// admin and its peer's at peer, serving a modula store over the first n
// of addrs, named r0, r1, ...
func storeFleetYAML(admin, peer int, addrs []string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kolco:\n  admin_listen: 127.0.0.1:%d\n  admin_peers: [\"127.0.0.1:%d\"]\n", admin, peer)
	b.WriteString("p:\n  listen: 127.0.0.1:0\n  redis: true\n  distribution: modula\n  timeout: 10000\n  store: {enabled: true}\n  servers:\n")
	for i := range n {
		fmt.Fprintf(&b, "   - %s:1 r%d\n", addrs[i], i)
	}
	return b.String()
}
