package proxy

import (
	"fmt"
	"strconv"
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
	t.Parallel()
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

// movedKeys writes n keys through cl with values "v-<key>" (numeric for
// every fourth), reloads s over the servers after, and returns the keys
// the change moved with the index of the server each lived on.
func movedKeys(t *testing.T, c *cluster, s *Server, cl *mc, yamlAfter string, n int) (keys []string, prev []int) {
	all := testKeys("w", n)
	for _, k := range all {
		setValue(cl, k, "v-"+k, 3, 0)
	}
	was := routeNames(s.testPool("p"), all)
	reload(t, s, yamlAfter)
	now := routeNames(s.testPool("p"), all)
	for i, k := range all {
		if was[i] != now[i] {
			j, _ := strconv.Atoi(strings.TrimPrefix(was[i], "m"))
			keys, prev = append(keys, k), append(prev, j)
		}
	}
	return keys, prev
}

// TestWarmCommandsOnMovedKeys: in a migration window every command on a
// key the change moved answers as if the key had always been on its new
// server, and leaves no copy on the previous one: writes and deletes
// delete it there, commands that change the value held move it first,
// gets and mg give the new server's CAS value.
func TestWarmCommandsOnMovedKeys(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	s := startProxy(t, c.yaml("  distribution: ring\n", 0, 1, 2))
	cl := dial(t, s.Addr("p").String())
	keys, prev := movedKeys(t, c, s, cl, c.yaml("  distribution: ring\n", 0, 1, 2, 3), 400)
	newServer := dialDirect(t, c.ms[3])
	type step struct {
		name  string
		run   func(t *testing.T, k string, prev *direct) // through the proxy; fails the test on a wrong reply
		value func(k string) string                      // the value after, "" for none
	}
	want := func(t *testing.T, req, reply string) {
		t.Helper()
		if got := cl.do(req); got != reply {
			t.Fatalf("%q on a moved key: %q, want %q", req, got, reply)
		}
	}
	same := func(k string) string { return "v-" + k }
	is := func(v string) func(string) string { return func(string) string { return v } }
	steps := []step{
		{"set", func(t *testing.T, k string, _ *direct) { want(t, "set "+k+" 5 0 2\r\nv1\r\n", "STORED\r\n") }, is("v1")},
		{"delete", func(t *testing.T, k string, _ *direct) { want(t, "delete "+k+"\r\n", "DELETED\r\n") }, is("")},
		{"md", func(t *testing.T, k string, _ *direct) { want(t, "md "+k+"\r\n", "HD\r\n") }, is("")},
		{"ms", func(t *testing.T, k string, _ *direct) { want(t, "ms "+k+" 2 T0\r\nv2\r\n", "HD\r\n") }, is("v2")},
		{"add", func(t *testing.T, k string, _ *direct) { want(t, "add "+k+" 0 0 1\r\nx\r\n", "NOT_STORED\r\n") }, same},
		{"append", func(t *testing.T, k string, _ *direct) { want(t, "append "+k+" 0 0 1\r\nx\r\n", "STORED\r\n") }, func(k string) string { return "v-" + k + "x" }},
		{"replace", func(t *testing.T, k string, _ *direct) { want(t, "replace "+k+" 0 0 1\r\nr\r\n", "STORED\r\n") }, is("r")},
		{"touch", func(t *testing.T, k string, _ *direct) { want(t, "touch "+k+" 100\r\n", "TOUCHED\r\n") }, same},
		{"gets then cas", func(t *testing.T, k string, _ *direct) {
			reply := cl.do("gets " + k + "\r\n")
			f := strings.Fields(reply)
			if len(f) < 5 || f[0] != "VALUE" {
				t.Fatalf("gets %s: %q", k, reply)
			}
			it, ok := newServer.get(k)
			if !ok || strconv.FormatUint(it.cas, 10) != f[4] {
				t.Fatalf("gets %s gave CAS %s; the new server holds %+v, %v", k, f[4], it, ok)
			}
			want(t, fmt.Sprintf("cas %s 0 0 1 %s\r\nc\r\n", k, f[4]), "STORED\r\n")
		}, is("c")},
		{"mg with flags", func(t *testing.T, k string, _ *direct) {
			reply := cl.do("mg " + k + " k v c Oab\r\n")
			it, ok := newServer.get(k)
			if wantReply := fmt.Sprintf("VA %d k%s c%d Oab\r\nv-%s\r\n", len(k)+2, k, it.cas, k); !ok || reply != wantReply {
				t.Fatalf("mg %s: %q, want %q", k, reply, wantReply)
			}
		}, same},
		{"incr", func(t *testing.T, k string, prev *direct) {
			prev.set(k, "10")
			want(t, "incr "+k+" 5\r\n", "15\r\n")
		}, is("15")},
		{"ma", func(t *testing.T, k string, prev *direct) {
			prev.set(k, "10")
			want(t, "ma "+k+" v D3\r\n", "VA 2\r\n13\r\n")
		}, is("13")},
		{"ms in add mode", func(t *testing.T, k string, _ *direct) { want(t, "ms "+k+" 1 ME\r\nx\r\n", "NS\r\n") }, same},
		{"gat", func(t *testing.T, k string, _ *direct) {
			if reply := cl.do("gat 100 " + k + "\r\n"); !strings.HasPrefix(reply, "VALUE "+k+" 3 ") {
				t.Fatalf("gat %s: %q", k, reply)
			}
		}, same},
	}
	if len(keys) < 2*len(steps) {
		t.Fatalf("%d keys moved: too few", len(keys))
	}
	for i, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			for _, j := range []int{2 * i, 2*i + 1} {
				k := keys[j]
				p := dialDirect(t, c.ms[prev[j]])
				st.run(t, k, p)
				if it, ok := p.get(k); ok && st.name != "gat" && st.name != "mg with flags" {
					t.Fatalf("%s: the previous server still holds %s: %+v", st.name, k, it)
				}
				value := st.value(k)
				if got := getValue(cl, k); got != value {
					t.Fatalf("after %s, %s reads %q, want %q", st.name, k, got, value)
				}
				it, ok := newServer.get(k)
				if value != "" && (!ok || it.value != value) {
					t.Fatalf("after %s the new server holds %+v, %v; want %q", st.name, it, ok, value)
				}
				if st.name == "touch" || st.name == "gat" {
					if it.ttl < 90 || it.ttl > 100 {
						t.Fatalf("after %s the TTL is %d, want 100", st.name, it.ttl)
					}
				}
			}
		})
	}
}

// TestWarmRestoreReadsStandIns: under rehash a server's keys are written
// to the servers standing in for it while it is down; when it is restored,
// what was written meanwhile is copied to it first (settled), so its keys
// read as written without a fallback, and once the window closes the
// stand-ins' copies are gone, so that a second failure cannot serve them.
func TestWarmRestoreReadsStandIns(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	settings := "  distribution: jump\n  auto_eject_hosts: true\n  server_failure_limit: 1\n" +
		"  warm: {window: 300}\n  sweep: {exclusive: [\"*\"], rate: 100000}\n"
	s := startProxy(t, c.yaml(settings, 0, 1, 2, 3))
	cl := dial(t, s.Addr("p").String())
	keys := testKeys("restore", 1200)
	for _, k := range keys {
		setValue(cl, k, "before", 0, 0)
	}
	p := s.testPool("p")
	owners := routeNames(p, keys)
	down := p.backends[1]
	down.fail(ErrConnLost, 1)
	if !down.health.isDown() {
		t.Fatal("m1 not marked down")
	}
	var theirs []string
	for i, k := range keys {
		if owners[i] == "m1" {
			theirs = append(theirs, k)
			setValue(cl, k, "while-down", 0, 0) // to its stand-in
		}
	}
	if len(theirs) < 100 {
		t.Fatalf("m1 owns %d keys", len(theirs))
	}
	p.checks.restore(down) // settled, then back
	if down.health.isDown() {
		t.Fatal("m1 not restored")
	}
	for _, k := range theirs {
		if got := getValue(cl, k); got != "while-down" {
			t.Fatalf("%s after m1's restore reads %q, want the value written while it was down", k, got)
		}
	}
	if got := down.stats.settled.Load(); got != uint64(len(theirs)) {
		t.Errorf("%d keys settled on m1 for its %d written while it was down", got, len(theirs))
	}
	if got := p.mig.stats.fallbacks.Load(); got != 0 {
		t.Errorf("%d reads fell back to the stand-ins: m1 was settled before it served", got)
	}
	eventually(t, "the window to close and the sweep to end", func() bool { return p.place.Load().mig == nil })
	for i, orphans := range census(t, c, p) {
		if len(orphans) != 0 {
			t.Errorf("m%d holds %d keys it does not own after the sweep", i, len(orphans))
		}
	}
	m1 := dialDirect(t, c.ms[1])
	for _, k := range theirs {
		if it, ok := m1.get(k); !ok || it.value != "while-down" {
			t.Fatalf("%s on m1: %+v, %v", k, it, ok)
		}
	}
}

// TestWarmNeverReadsDownServers: a previous server marked down is not
// read (a read of it could wait a whole timeout), nor once it is back
// within the window, since writes could not delete its copies meanwhile;
// one whose read fails is not read again in the window.
func TestWarmNeverReadsDownServers(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	g := startGate(t, c.ms[0].addr)
	lines := func(idx ...int) []string {
		out := c.lines(idx...)
		out[0] = g.addr + ":1 m0"
		return out
	}
	settings := "  distribution: ring\n  ejection: fail-fast\n"
	s := startProxy(t, placementYAML(settings, lines(0, 1, 2)))
	cl := dial(t, s.Addr("p").String())
	keys := testKeys("down", 600)
	for _, k := range keys {
		setValue(cl, k, "v", 0, 0)
	}
	was := routeNames(s.testPool("p"), keys)
	reload(t, s, placementYAML(settings, lines(0, 1, 2, 3)))
	p := s.testPool("p")
	now := routeNames(p, keys)
	var fromM0 []string
	for i, k := range keys {
		if was[i] == "m0" && now[i] == "m3" {
			fromM0 = append(fromM0, k)
		}
	}
	if len(fromM0) < 4 {
		t.Fatalf("%d keys moved from m0 to m3", len(fromM0))
	}
	for len(g.seen) > 0 {
		<-g.seen
	}
	p.backends[0].health.down.Store(true)
	for _, k := range fromM0[:len(fromM0)/2] {
		if got := getValue(cl, k); got != "" {
			t.Fatalf("%s read %q from m0 while it is down", k, got)
		}
	}
	p.backends[0].health.down.Store(false)
	for _, k := range fromM0[len(fromM0)/2:] {
		if got := getValue(cl, k); got != "" {
			t.Fatalf("%s read %q from m0, back in the window after it was down", k, got)
		}
	}
	select {
	case line := <-g.seen:
		t.Fatalf("m0 was sent %q", line)
	default:
	}
}

// TestWarmStopsReadingAFailedServer: a server a reload removed is read
// for the keys it held; once a read of it fails (here it is gone), it is
// not read again in the window, so that its keys miss at once rather than
// each waiting for the failure.
func TestWarmStopsReadingAFailedServer(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	settings := "  distribution: maglev\n"
	s := startProxy(t, c.yaml(settings, 0, 1, 2, 3))
	cl := dial(t, s.Addr("p").String())
	keys := testKeys("gone", 600)
	for _, k := range keys {
		setValue(cl, k, "v", 0, 0)
	}
	was := routeNames(s.testPool("p"), keys)
	reload(t, s, c.yaml(settings, 0, 1, 2))
	p := s.testPool("p")
	var held []string
	for i, k := range keys {
		if was[i] == "m3" {
			held = append(held, k)
		}
	}
	if got := getValue(cl, held[0]); got != "v" {
		t.Fatalf("%s, on the removed server, reads %q", held[0], got)
	}
	c.ms[3].stop()
	for _, k := range held[1:] {
		if got := getValue(cl, k); got != "" {
			t.Fatalf("%s reads %q from a server that is gone", k, got)
		}
	}
	if n := p.mig.stats.cleanFails.Load(); n != 1 {
		t.Errorf("%d failed reads of the server that is gone; want 1, then none", n)
	}
}
