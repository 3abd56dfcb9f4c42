package proxy

import (
	"strings"
	"testing"
)

// TestWindowReadAtStandInFenced: under nutcracker's modula an ejection
// places every key afresh over the servers left and opens a migration
// window, whose reads of a moved key go to its new server - a stand-in -
// and fall back to its previous one on a miss. Each stand-in holds a copy
// a change left behind of every key it does not own, older than the key's
// last write. A read in the window must not return it: the stand-in's
// copy is removed before the read, as outside a window (see
// outage.fence), and the miss falls back to the key's previous server,
// which holds the value written. Before, a read in a window went to the
// stand-in unfenced (the fault schedule's seed 113: memcached, modula,
// rehash, a file source; 2 and 5 reads older than acknowledged values in
// two replays); here it read the left-behind copy of most keys the
// ejection moved between servers up. One-key gets and gets of several
// keys, which a window serves by two paths, are both checked.
func TestWindowReadAtStandInFenced(t *testing.T) {
	t.Parallel()
	for _, multi := range []bool{false, true} {
		name := "get"
		if multi {
			name = "multi-get"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := startDoublePoolWith(t, "memcached", "  distribution: modula\n  auto_eject_hosts: true\n  server_failure_limit: 1\n"+
				"  timeout: 2000\n  server_retry_timeout: 3600000\n  warm: {enabled: true, window: 600000}\n")
			keys := testKeys("fence:window", 400)
			d.setAll(keys, "written")
			// Every server but a key's owner holds a copy of it from
			// before, as a change that moved the key away leaves one.
			for _, addr := range d.servers {
				c, err := dialKV("memcached", addr)
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range keys {
					if ownerOf(d.p, k) == addr {
						continue
					}
					if err := c.set(k, "left-behind"); err != nil {
						t.Fatal(err)
					}
				}
				c.close()
			}
			out := d.p.backends[0]
			var moved []string // keys of servers up that the ejection moves
			for _, k := range keys {
				if o := ownerOf(d.p, k); o != out.addr {
					moved = append(moved, k)
				}
			}
			out.fail(ErrConnLost, 1)
			if !out.health.isDown() {
				t.Fatal("server not marked down")
			}
			if pl := d.p.place.Load(); pl.mig == nil || !pl.mig.open() {
				t.Fatal("the ejection opened no migration window")
			}
			n, reads, example := 0, 0, ""
			c := dial(t, d.s.Addr("p").String())
			for i := 0; i < len(moved); i++ {
				req := "get " + moved[i]
				if multi && i+1 < len(moved) {
					req += " " + moved[i+1]
					i++
				}
				reads++
				if got := c.do(req + "\r\n"); strings.Contains(got, "left-behind") {
					if n == 0 {
						example = req + ": " + got
					}
					n++
				}
			}
			if n > 0 {
				t.Errorf("%d of %d reads of the %d keys of servers up, in the ejection's window, read a stand-in's left-behind copy (%q)",
					n, reads, len(moved), example)
			}
		})
	}
}

// TestTwemproxyReturnWindowReadsNoStandIn: under ketama and modula with
// warm changes on, a server's return rebuilds the placement and opens a
// migration window. A key of the server that no write of its outage
// touched, and that it no longer holds (started again empty, or evicted),
// misses there; the stand-in that served it while it was out holds a copy
// a change left behind, older than the key's last write, that no write of
// the outage vouched for. The window must not read it: a return's window
// does not read the placement with the server out, as a kolco
// distribution's return does not (see restoreChange). Before, it read the
// stand-in on that miss and answered the left-behind copy for every such
// key.
func TestTwemproxyReturnWindowReadsNoStandIn(t *testing.T) {
	t.Parallel()
	for _, dist := range []string{"ketama", "modula"} {
		t.Run(dist, func(t *testing.T) {
			t.Parallel()
			d := startDoublePoolWith(t, "memcached", "  distribution: "+dist+"\n  hash: fnv1a_64\n  auto_eject_hosts: true\n"+
				"  server_failure_limit: 1\n  timeout: 2000\n  server_retry_timeout: 3600000\n  warm: {enabled: true, window: 600000}\n")
			keys := testKeys("return:window", 400)
			d.setAll(keys, "written")
			x, xKeys := d.mostOwned(keys)
			x.fail(ErrConnLost, 1)
			if !x.health.isDown() {
				t.Fatal("server not marked down")
			}
			// Each stand-in's copy of x's keys is one a change left
			// behind; x loses its own, as a server started again empty
			// does. Neither is read nor written through the pool.
			for _, k := range xKeys {
				s := ownerOf(d.p, k)
				c, err := dialKV("memcached", s)
				if err != nil {
					t.Fatal(err)
				}
				if err := c.set(k, "left-behind"); err != nil {
					t.Fatal(err)
				}
				c.close()
			}
			own := dial(t, x.addr)
			for _, k := range xKeys {
				own.do("delete " + k + "\r\n")
			}
			d.p.checks.restore(x)
			if x.health.isDown() {
				t.Fatal("server not restored")
			}
			if n, ex := d.older(xKeys, "written"); n > 0 {
				t.Errorf("once back: %d of its %d keys read a stand-in's left-behind copy (%s)", n, len(xKeys), ex)
			}
		})
	}
}
