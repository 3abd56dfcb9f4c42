package proxy

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/faults"
)

// TestModulaReturnSettlesNoValueDeletedMeanwhile: a memcached cache under
// rehash and modula over four servers s0..s3, each behind a relay, with
// warm changes, as the fault schedule's seed 3553 ran it. Key k is s0's
// with every server up and goes to a stand-in x with s3 out; it is set
// there while s3 is out. s3's return, settling with writes going on
// around it, sends k back to s0 and reads x's value for it; the replies
// of x are held, and meanwhile a client deletes k (at x, and at s0 by
// the ejection's window). The return then fails on s3 itself, as the
// seed's failed on another stalled server, and s3 stays out. Before, the
// return wrote the value it had read to s0 after the delete had run
// there, and every read of k, missing at x, fell back through the window
// to s0 and gave the deleted value (the seed read c3.640 after its delete
// was acknowledged, until s3 came back). Now a key a write reached while
// its value was read is left for the return's next round, and the read
// misses.
func TestModulaReturnSettlesNoValueDeletedMeanwhile(t *testing.T) {
	t.Parallel()
	var ms []*memcached
	var relays []*faults.Relay
	settings := "p:\n  listen: 127.0.0.1:0\n  distribution: modula\n  hash: fnv1a_64\n  auto_eject_hosts: true\n" +
		"  server_failure_limit: 1\n  timeout: 60000\n  server_retry_timeout: 3600000\n" +
		"  warm: {enabled: true}\n  sweep: {exclusive: [\"*\"]}\n  servers:\n"
	for i := range 4 {
		m := startMemcached(t, 0)
		rl, err := faults.NewRelay(m.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(rl.Close)
		ms, relays = append(ms, m), append(relays, rl)
		settings += fmt.Sprintf("   - %s:1 s%d\n", rl.Addr, i) // modula places over the servers in name order
	}
	d := &doublePool{t: t, proto: "memcached", s: startProxy(t, settings)}
	d.p = d.s.testPool("p")
	d.redial()
	t.Cleanup(func() { d.client.close() })
	bs := d.p.place.Load().configured().servers
	s0, s3 := bs[0], bs[3]
	keys := testKeys("deleted", 400)
	upOwner := map[string]string{}
	for _, k := range keys {
		upOwner[k] = ownerOf(d.p, k)
	}
	if s3.fail(ErrConnLost, 1); !s3.health.isDown() {
		t.Fatal("s3 not marked down")
	}
	k, own := "", ""
	for _, key := range keys {
		switch {
		case k == "" && upOwner[key] == s0.addr && ownerOf(d.p, key) != s0.addr:
			k = key
		case own == "" && upOwner[key] == s3.addr:
			own = key
		}
	}
	if k == "" || own == "" {
		t.Fatalf("no key of s0 moved by s3's ejection (%q), or none of s3's (%q)", k, own)
	}
	xi := -1
	for i, b := range bs {
		if b.addr == ownerOf(d.p, k) {
			xi = i
		}
	}
	d.setAll([]string{k}, "v1")    // on x, noted in s3's outage
	d.setAll([]string{own}, "own") // s3's own, on its stand-in

	gets := mcStat(t, ms[xi].addr, "cmd_get")
	relays[xi].HoldReplies()
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		d.p.checks.restore(s3) // reads k at x, whose reply waits
	}()
	eventually(t, "the return reading k at x", func() bool { return mcStat(t, ms[xi].addr, "cmd_get") > gets })

	misses := mcStat(t, ms[0].addr, "delete_misses")
	deleted := make(chan error, 1)
	go func() { deleted <- mcDelete(d.s.Addr("p").String(), k) }()
	eventually(t, "the delete run at x", func() bool { return !mcHolds(t, ms[xi].addr, k) })
	eventually(t, "the window's delete run at s0", func() bool { return mcStat(t, ms[0].addr, "delete_misses") > misses })

	relays[3].Cut() // the return fails on s3 once it has settled k
	relays[xi].Heal()
	if err := <-deleted; err != nil {
		t.Fatalf("delete %s: %v", k, err)
	}
	<-returned
	if !s3.health.isDown() {
		t.Fatal("s3 restored through a cut link")
	}
	if v, found, err := d.client.get(k); err != nil || found {
		t.Errorf("%s read with s3 still out, after its delete was acknowledged: %q found=%v err=%v", k, v, found, err)
	}
}

// mcStat returns the statistic name of the memcached at addr.
func mcStat(t *testing.T, addr, name string) uint64 {
	t.Helper()
	lines := mcAskRaw(t, addr, "stats\r\n", "END\r\n")
	for _, line := range lines {
		if v, ok := strings.CutPrefix(line, "STAT "+name+" "); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("memcached %s has no statistic %s", addr, name)
	return 0
}

// mcHolds reports whether the memcached at addr holds key.
func mcHolds(t *testing.T, addr, key string) bool {
	t.Helper()
	return len(mcAskRaw(t, addr, "get "+key+"\r\n", "END\r\n")) > 1
}

// mcAskRaw sends req to the memcached at addr and returns the lines of
// its reply, up to and with end.
func mcAskRaw(t *testing.T, addr, req, end string) []string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	var lines []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
		if line == end {
			return lines
		}
	}
}

// mcDelete deletes key through the proxy at addr, on a connection of its
// own, and returns an error unless the reply is DELETED or NOT_FOUND.
func mcDelete(addr, key string) error {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	if _, err := conn.Write([]byte("delete " + key + "\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "DELETED\r\n" && line != "NOT_FOUND\r\n" {
		return fmt.Errorf("reply %q", line)
	}
	return nil
}
