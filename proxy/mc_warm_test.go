package proxy

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// exptimeOf returns the expiry key i is written with: none, an hour, or
// 40 days as a Unix time (which memcached reports as a TTL over 30 days).
func exptimeOf(i int) int {
	switch i % 3 {
	case 1:
		return 3600
	case 2:
		return int(time.Now().Unix()) + 40*24*3600
	}
	return 0
}

// TestWarmAddMovesKeysOnRead: after a reload adds a server to a ring,
// every key still reads through the proxy (single and multi-key gets), and
// the moved keys now live on their new server with their flags and the
// TTL they had left (no expiry stays none; over 30 days stays over 30
// days), copied once each.
func TestWarmAddMovesKeysOnRead(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	s := startProxy(t, c.yaml("  distribution: ring\n", 0, 1, 2))
	cl := dial(t, s.Addr("p").String())
	keys := testKeys("warm", 900)
	for i, k := range keys {
		setValue(cl, k, "v-"+k, i%7, exptimeOf(i))
	}
	was := routeNames(s.testPool("p"), keys)
	reload(t, s, c.yaml("  distribution: ring\n", 0, 1, 2, 3))
	p := s.testPool("p")
	now := routeNames(p, keys)
	moved := 0
	for i := range keys {
		if was[i] != now[i] {
			if now[i] != "m3" {
				t.Fatalf("%s moved from %s to %s, not to the new server", keys[i], was[i], now[i])
			}
			moved++
		}
	}
	if moved < 100 {
		t.Fatalf("only %d of %d keys moved: the test would not test much", moved, len(keys))
	}
	for i := 0; i < len(keys); i++ {
		if i%2 == 0 {
			if got := getValue(cl, keys[i]); got != "v-"+keys[i] {
				t.Fatalf("get %s: %q", keys[i], got)
			}
			continue
		}
		batch := keys[i:min(i+9, len(keys))]
		reply := cl.do("get " + strings.Join(batch, " ") + "\r\n")
		for j, k := range batch {
			if want := fmt.Sprintf("VALUE %s %d %d\r\nv-%s\r\n", k, (i+j)%7, len(k)+2, k); !strings.Contains(reply, want) {
				t.Fatalf("get of %d keys lacks %q:\n%s", len(batch), want, reply)
			}
		}
		i += len(batch) - 1
	}
	d := dialDirect(t, c.ms[3])
	for i, k := range keys {
		if was[i] == now[i] {
			continue
		}
		it, ok := d.get(k)
		if !ok || it.value != "v-"+k || it.flags != uint32(i%7) {
			t.Fatalf("%s on the new server: %+v, %v", k, it, ok)
		}
		switch exp := exptimeOf(i); {
		case exp == 0 && it.ttl != -1:
			t.Fatalf("%s written without expiry has TTL %d on the new server", k, it.ttl)
		case exp == 3600 && (it.ttl > 3600 || it.ttl < 3000):
			t.Fatalf("%s written for an hour has TTL %d on the new server", k, it.ttl)
		case exp > 3600 && (it.ttl > 40*24*3600+2 || it.ttl < 39*24*3600):
			// Stored as a Unix time by the proxy's clock, which may be a
			// second ahead of memcached's, which ticks once a second.
			t.Fatalf("%s written for 40 days has TTL %d on the new server", k, it.ttl)
		}
	}
	st := p.mig.stats
	if got := st.copies.Load(); got != uint64(moved) {
		t.Errorf("%d copies for %d moved keys", got, moved)
	}
	if st.hits.Load() != uint64(moved) || st.fallbacks.Load() != uint64(moved) {
		t.Errorf("fallbacks %d, hits %d; want %d each", st.fallbacks.Load(), st.hits.Load(), moved)
	}
	t.Logf("%d of %d keys moved; every one read warm and copied", moved, len(keys))
}

// TestWarmMultiGetOfOneServer: a get of several keys that all moved to
// one server (one request to one server, not split) answers every value
// found at their previous servers, in the order asked.
func TestWarmMultiGetOfOneServer(t *testing.T) {
	c := startCluster(t, 4)
	s := startProxy(t, c.yaml("  distribution: ring\n", 0, 1, 2))
	cl := dial(t, s.Addr("p").String())
	keys := testKeys("one", 300)
	for _, k := range keys {
		setValue(cl, k, "v-"+k, 3, 0)
	}
	was := routeNames(s.testPool("p"), keys)
	reload(t, s, c.yaml("  distribution: ring\n", 0, 1, 2, 3))
	var moved []string
	for i, now := range routeNames(s.testPool("p"), keys) {
		if now != was[i] && len(moved) < 6 {
			moved = append(moved, keys[i])
		}
	}
	if len(moved) < 2 {
		t.Fatalf("%d keys moved", len(moved))
	}
	var want strings.Builder
	for _, k := range moved {
		fmt.Fprintf(&want, "VALUE %s 3 %d\r\nv-%s\r\n", k, len(k)+2, k)
	}
	want.WriteString("END\r\n")
	if got := cl.do("get " + strings.Join(moved, " ") + "\r\n"); got != want.String() {
		t.Fatalf("get of %d keys moved to one server:\n%q\nwant\n%q", len(moved), got, want.String())
	}
}
