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
