package proxy

import (
	"fmt"
	"testing"
)

// TestModulaSecondFailureReadsNoFallbackCopy: a memcached cache under
// rehash and modula over four servers s0..s3, with warm changes and every
// server the pool's alone, as the fault schedule's seed 3553 ran it.
// p2:k20 is s2's with every server up, and s0's with s3 out, or s1 and s3.
// Read while s3 is out, it misses at s0 and the ejection's window falls
// back to s2. Before, the window copied s2's value to s0, a copy no write
// of the outage vouched for: s3's return neither settled nor removed it,
// and once the key, written again on s2, went back to s0 with s1 and s3
// out together, the read gave the value of before (the seed read c5.570
// after c5.749 was acknowledged). Now the read gives the value written
// last, or misses.
func TestModulaSecondFailureReadsNoFallbackCopy(t *testing.T) {
	t.Parallel()
	settings := "  distribution: modula\n  hash: fnv1a_64\n  auto_eject_hosts: true\n  server_failure_limit: 1\n" +
		"  timeout: 2000\n  server_retry_timeout: 3600000\n  warm: {enabled: true}\n  sweep: {exclusive: [\"*\"]}\n  servers:\n"
	d := &doublePool{t: t, proto: "memcached"}
	for i := range 4 {
		m := startMemcached(t, 0)
		settings += fmt.Sprintf("   - %s:1 s%d\n", m.addr, i) // modula places over the servers in name order
		d.servers = append(d.servers, m.addr)
	}
	d.s = startProxy(t, "p:\n  listen: 127.0.0.1:0\n"+settings)
	d.p = d.s.testPool("p")
	c, err := dialKV("memcached", d.s.Addr("p").String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	d.client = c
	const key = "p2:k20"
	bs := d.p.place.Load().configured().servers
	s0, s1, s2, s3 := bs[0], bs[1], bs[2], bs[3]
	if got := ownerOf(d.p, key); got != s2.addr {
		t.Fatalf("%s is read from %s with every server up, not s2's", key, got)
	}
	d.setAll([]string{key}, "before")
	if s3.fail(ErrConnLost, 1); !s3.health.isDown() {
		t.Fatal("s3 not marked down")
	}
	if got := ownerOf(d.p, key); got != s0.addr {
		t.Fatalf("%s is read from %s with s3 out, not s0's", key, got)
	}
	if v, found, err := d.client.get(key); err != nil || found && v != "before" {
		t.Fatalf("%s read with s3 out: %q %v %v", key, v, found, err)
	}
	if d.p.checks.restore(s3); s3.health.isDown() {
		t.Fatal("s3 not restored")
	}
	d.setAll([]string{key}, "after")
	for _, b := range []*backend{s1, s3} {
		if b.fail(ErrConnLost, 1); !b.health.isDown() {
			t.Fatalf("%s not marked down", b.addr)
		}
	}
	if got := ownerOf(d.p, key); got != s0.addr {
		t.Fatalf("%s is read from %s with s1 and s3 out, not s0's", key, got)
	}
	if n, example := d.older([]string{key}, "after"); n > 0 {
		t.Errorf("with s1 and s3 out, %s, set to \"after\" once s3 was back", example)
	}
}

// TestModulaPullAtAStandInKeepsTheValue: the same pool; with s3 out, an
// incr of s2's counter goes to its stand-in s0, where the window's
// fallback finds the value at s2 and copies it before the incr runs: a
// pull is a write of the outage, noted, and s3's return settles the
// counter from s0 back to s2. A read's fallback copies nothing to a
// stand-in (TestModulaSecondFailureReadsNoFallbackCopy); a pull that did
// the same found nothing at s0, answered NOT_FOUND and deleted s2's
// counter.
func TestModulaPullAtAStandInKeepsTheValue(t *testing.T) {
	t.Parallel()
	settings := "  distribution: modula\n  hash: fnv1a_64\n  auto_eject_hosts: true\n  server_failure_limit: 1\n" +
		"  timeout: 2000\n  server_retry_timeout: 3600000\n  warm: {enabled: true}\n  sweep: {exclusive: [\"*\"]}\n  servers:\n"
	for i := range 4 {
		m := startMemcached(t, 0)
		settings += fmt.Sprintf("   - %s:1 s%d\n", m.addr, i)
	}
	s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n"+settings)
	p := s.testPool("p")
	c := dial(t, s.Addr("p").String())
	const key = "p2:k20"
	bs := p.place.Load().configured().servers
	s0, s2, s3 := bs[0], bs[2], bs[3]
	if got := ownerOf(p, key); got != s2.addr {
		t.Fatalf("%s is read from %s with every server up, not s2's", key, got)
	}
	if got := c.do("set " + key + " 0 0 1\r\n5\r\n"); got != "STORED\r\n" {
		t.Fatalf("set: %q", got)
	}
	if s3.fail(ErrConnLost, 1); !s3.health.isDown() {
		t.Fatal("s3 not marked down")
	}
	if got := ownerOf(p, key); got != s0.addr {
		t.Fatalf("%s is read from %s with s3 out, not s0's", key, got)
	}
	if got := c.do("incr " + key + " 1\r\n"); got != "6\r\n" {
		t.Fatalf("incr with s3 out, the counter at s2: %q, want 6", got)
	}
	if p.checks.restore(s3); s3.health.isDown() {
		t.Fatal("s3 not restored")
	}
	if got := c.do("get " + key + "\r\n"); got != "VALUE "+key+" 0 1\r\n6\r\nEND\r\n" {
		t.Fatalf("get once s3 is back: %q, want the incremented 6", got)
	}
}
