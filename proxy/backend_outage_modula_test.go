package proxy

import (
	"strings"
	"testing"
)

// TestModulaSecondReturnSettlesWhatTheFirstMoved: a Redis cache under
// rehash and modula over r0..r3, the order of the fault schedule's seed
// 1895. p2:k20 and p2:k37 are r2's with every server up, r1's with r0 out
// (and with r0 and r3 out), and r0's with r3 alone out. Written while r0
// and r3 are out (to r1); r0 back takes them from r1, and r3 back sends
// them on to r2, whose copy is from before the outage. Before, r0's return
// noted them in r3's outage only if r3 would serve them: r3's return left
// r2's old copy to be read and r0's copy behind (the copy the seed read
// after newer writes, 0.9 s after both returns). Now each read gives the
// value written while both were out, no other server holds a copy, and a
// write and a delete after the returns are what reads give.
func TestModulaSecondReturnSettlesWhatTheFirstMoved(t *testing.T) {
	t.Parallel()
	d := startDoublePool(t, "redis", "modula")
	c := dialRedis(t, d.s.Addr("p").String())
	keys := []string{"p2:k20", "p2:k37"}
	byName := d.named()
	for _, k := range keys {
		if got := ownerOf(d.p, k); got != byName["r2"].addr {
			t.Fatalf("%s is read from %s with every server up, not r2's", k, got)
		}
		c.do("SET", k, "before")
	}
	for _, name := range []string{"r0", "r3"} {
		d.markDown(name)
	}
	for _, k := range keys {
		if got := ownerOf(d.p, k); got != byName["r1"].addr {
			t.Fatalf("%s is read from %s with r0 and r3 out, not r1's", k, got)
		}
		c.do("SET", k, "outage")
	}
	for _, name := range []string{"r0", "r3"} {
		d.restore(name)
	}
	for _, k := range keys {
		if got := c.do("GET", k); !strings.Contains(got, "outage") {
			t.Errorf("%s, written while r0 and r3 were out, reads %q once both are back", k, got)
		}
	}
	if n := d.copiesElsewhere(keys); n > 0 {
		t.Errorf("%d copies of the keys left on servers their reads do not go to", n)
	}
	c.do("SET", "p2:k20", "after")
	c.do("DEL", "p2:k37")
	if got := c.do("GET", "p2:k20"); !strings.Contains(got, "after") {
		t.Errorf("p2:k20 set to \"after\" once r0 and r3 are back reads %q", got)
	}
	if got := c.do("GET", "p2:k37"); !strings.HasPrefix(got, "$-1") {
		t.Errorf("p2:k37 deleted once r0 and r3 are back reads %q", got)
	}
}

// TestModulaReturnLeavingAKeyNotesItForTheServerStillOut: a Redis cache
// under rehash and modula over r0..r3, the order of the fault schedule's
// seed 4024. p2:k20 and p2:k11 are r2's with every server up, and r0's
// with r3 out, with r2 and r3 out, and with r2 alone out. Written while
// r3 alone is out (to r0), then r2 goes out too; r3 back leaves them on
// r0, and r2 back takes them from r0, its own copy from before the
// outage. Before, r3's return noted in r2's outage only the keys it moved
// to another server: r2's journal did not name these, written before r2
// went out, and its return served its older copy (the seed read it
// twice within 0.3 s of r2's return, 4.3 s after the newer write was
// acknowledged). Now each read gives the value written while r3 was out,
// and no other server holds a copy.
func TestModulaReturnLeavingAKeyNotesItForTheServerStillOut(t *testing.T) {
	t.Parallel()
	d := startDoublePool(t, "redis", "modula")
	c := dialRedis(t, d.s.Addr("p").String())
	keys := []string{"p2:k20", "p2:k11"}
	byName := d.named()
	for _, k := range keys {
		if got := ownerOf(d.p, k); got != byName["r2"].addr {
			t.Fatalf("%s is read from %s with every server up, not r2's", k, got)
		}
		c.do("SET", k, "before")
	}
	d.markDown("r3")
	for _, k := range keys {
		if got := ownerOf(d.p, k); got != byName["r0"].addr {
			t.Fatalf("%s is read from %s with r3 out, not r0's", k, got)
		}
		c.do("SET", k, "outage")
	}
	d.markDown("r2")
	for _, name := range []string{"r3", "r2"} {
		d.restore(name)
		for _, k := range keys {
			if got := c.do("GET", k); !strings.Contains(got, "outage") {
				t.Errorf("%s, written while r3 was out, reads %q once %s is back", k, got, name)
			}
		}
	}
	if n := d.copiesElsewhere(keys); n > 0 {
		t.Errorf("%d copies of the keys left on servers their reads do not go to", n)
	}
}

// TestModulaReturnRemovingAKeyNotesItForItsServerStillOut: a Redis cache
// under rehash and modula over r0..r3, the order of the fault schedule's
// seed 4024. p1:k1 is r0's with every server up, r2's with r3 out, r1's
// with r0 and r3 out, and r3's with r0 alone out. Written while r3 alone
// is out (to r2), then r0 goes out too: r3 back serves the key, and no
// write of its outage reached r1, where it is read meanwhile, so its
// return removes it (a miss) - and r0 back serves its copy from before.
// Before, r3's return noted the key nowhere, as r0's journal did not name
// it (written before r0 went out): r0's return served its older copy (the
// seed read it 0.1 s after r0's return, 2.3 s after the newer write was
// acknowledged). Now no read gives the value of before the outages.
func TestModulaReturnRemovingAKeyNotesItForItsServerStillOut(t *testing.T) {
	t.Parallel()
	d := startDoublePool(t, "redis", "modula")
	c := dialRedis(t, d.s.Addr("p").String())
	const key = "p1:k1"
	byName := d.named()
	if got := ownerOf(d.p, key); got != byName["r0"].addr {
		t.Fatalf("%s is read from %s with every server up, not r0's", key, got)
	}
	c.do("SET", key, "before")
	d.markDown("r3")
	if got := ownerOf(d.p, key); got != byName["r2"].addr {
		t.Fatalf("%s is read from %s with r3 out, not r2's", key, got)
	}
	c.do("SET", key, "outage")
	d.markDown("r0")
	for _, name := range []string{"r3", "r0"} {
		d.restore(name)
		if got := c.do("GET", key); strings.Contains(got, "before") {
			t.Errorf("%s, written while r3 was out, reads %q once %s is back", key, got, name)
		}
	}
	if n := d.copiesElsewhere([]string{key}); n > 0 {
		t.Errorf("%d copies of the key left on servers its reads do not go to", n)
	}
}

// TestModulaThreeOutReturnsSettleWhatNoneAloneMoves: a Redis cache under
// rehash and modula over r0..r3. Keys that are r2's with every server up
// and r0's with r3 out are written while r3 is out (to r0); r2 and r1 go
// out too, then r3, r2 and r1 come back in turn, and the keys that stay on
// r0 until r1's return go home to r2 then, whose copy is from before the
// outages. Before, r3's return noted such a key for a server still out
// only if that server's return alone, the other still out, would move it
// - neither does - and r1 back served r2's value of before for every such
// key. Now none reads it.
func TestModulaThreeOutReturnsSettleWhatNoneAloneMoves(t *testing.T) {
	t.Parallel()
	d := startDoublePool(t, "redis", "modula")
	byName := d.named()
	on := func(keys []string, name string) []string {
		var out []string
		for _, k := range keys {
			if ownerOf(d.p, k) == byName[name].addr {
				out = append(out, k)
			}
		}
		return out
	}
	// Keys that differ in more than a counter: FNV's low bits of a
	// counter's keys follow the counter, and their residues modulo 2, 3
	// and 4 do not vary apart.
	keys := on(spreadKeys("three", 4000), "r2")
	d.setAll(keys, "before")
	for _, name := range []string{"r3", "r2", "r1"} {
		d.markDown(name)
		if name == "r3" {
			keys = on(keys, "r0")
			d.setAll(keys, "outage")
		}
	}
	for _, name := range []string{"r3", "r2", "r1"} {
		d.restore(name)
		if name != "r1" {
			keys = on(keys, "r0") // left on r0 by this return
		}
	}
	if len(keys) < 5 {
		t.Fatalf("%d keys take the path; the test needs 5", len(keys))
	}
	if n, example := d.older(keys, "outage"); n > 0 {
		t.Errorf("r3, r2 and r1 back: %d of %d keys read a value older than the one written while r3 was out (%s)", n, len(keys), example)
	}
}
