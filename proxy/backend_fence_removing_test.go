package proxy

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
)

// holdFirstDrop is a pool's front whose first removal of a stand-in's
// copies waits until release is closed, entered closed as it begins: a
// removal still on its way while other reads come.
type holdFirstDrop struct {
	settler
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (h *holdFirstDrop) dropCopies(ctx context.Context, b *backend, keys []string) error {
	first := false
	h.once.Do(func() { first = true })
	if first {
		close(h.entered)
		<-h.release
	}
	return h.settler.dropCopies(ctx, b, keys)
}

// TestFenceReadsNoCopyWhileItsRemovalIsUnderWay: a Redis cache under
// rehash and modula, the order of the fault schedule's seed 5639. p2:k15
// is r2's over r0..r3 and r0's once r1 is removed (a cold change: r2 keeps
// its copy), and r2's again with r0 out. r0 goes out; one client's read
// of the key at r2 removes r2's copy first, and while that removal is on
// its way another client reads the key. Before, the first read recorded
// the copy as removed as it sent the removal, and the second went to r2
// at once and read the value of before the change, older than the one
// acknowledged on r0 (the seed read it 0.1 s after r0 was cut, two
// clients reading the key within a millisecond). Now neither read gives
// it.
func TestFenceReadsNoCopyWhileItsRemovalIsUnderWay(t *testing.T) {
	t.Parallel()
	d, _, key := oldCopyAtTheStandIn(t)
	hold := &holdFirstDrop{settler: d.p.outages.front, entered: make(chan struct{}), release: make(chan struct{})}
	d.p.outages.front = hold
	d.markDown("r0")

	first, second := dialRedis(t, d.s.Addr("p").String()), dialRedis(t, d.s.Addr("p").String())
	type answer struct {
		reply string
		err   error
	}
	firstGot := make(chan answer, 1)
	first.send("GET", key)
	go func() {
		reply, err := first.read()
		firstGot <- answer{reply, err}
	}()
	<-hold.entered // the first read's removal is on its way, held
	secondGot := second.do("GET", key)
	close(hold.release)
	a := <-firstGot
	if a.err != nil {
		t.Fatal(a.err)
	}
	for who, got := range map[string]string{"a read while another's removal was under way": secondGot, "the read that removed it": a.reply} {
		if strings.Contains(got, "before") {
			t.Errorf("r0 out: %s reads %q, r2's copy of before the change, older than \"change\" acknowledged on r0", who, got)
		}
	}
}

// failFirstDrop is a pool's front whose first removal of a stand-in's
// copies fails without removing them: a removal that timed out on a
// stalled link and was lost with its connection.
type failFirstDrop struct {
	settler
	once sync.Once
}

func (f *failFirstDrop) dropCopies(ctx context.Context, b *backend, keys []string) error {
	first := false
	f.once.Do(func() { first = true })
	if first {
		return &net.OpError{Op: "read", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 6379}, Err: os.ErrDeadlineExceeded}
	}
	return f.settler.dropCopies(ctx, b, keys)
}

// TestFenceReadFailsWhenItsRemovalFails: as above, r0 out and r2 holding
// p2:k15's value of before the change; the first read's removal of r2's
// copy fails and leaves the copy. The read fails with it rather than go
// to r2 and read that copy (the fault schedule's seed 7329: a removal
// timed out on a stalled link, and the read, sent once the link healed,
// read a value older than one acknowledged at the server out); the next
// read removes the copy and misses.
func TestFenceReadFailsWhenItsRemovalFails(t *testing.T) {
	t.Parallel()
	d, rs, key := oldCopyAtTheStandIn(t)
	d.p.outages.front = &failFirstDrop{settler: d.p.outages.front}
	d.markDown("r0")

	c := dialRedis(t, d.s.Addr("p").String())
	first := c.do("GET", key)
	if first != "-ERR Connection timed out\r\n" {
		t.Errorf("r0 out, the removal of r2's copy timed out: the read answered %q, want -ERR Connection timed out (not r2's copy of before the change, nor Go's text)", first)
	}
	if second := c.do("GET", key); second != "$-1\r\n" && second != "_\r\n" {
		t.Errorf("the next read, whose removal succeeds: %q, want a miss", second)
	}
	if got := dialRedis(t, rs[2].addr).do("EXISTS", key); got != ":0\r\n" {
		t.Errorf("r2 still holds %s: %q", key, got)
	}
}

// TestRefusedWriteAtAStandInVouchesForNothing: as above, r0 out and r2,
// its stand-in for p2:k15, holding the key's value of before the change.
// A write of the key there is refused (-NOREPLICAS: r2 asks for a replica
// it does not have), so r2's copy is still the old one. Before, the
// refused write was noted as written there: the next read went to r2 and
// read the value of before, and r0's return settled it onto r0, over the
// newer one (the fault schedule's seed 9309). Now neither reads it.
func TestRefusedWriteAtAStandInVouchesForNothing(t *testing.T) {
	t.Parallel()
	d, rs, key := oldCopyAtTheStandIn(t)
	d.markDown("r0")

	r2 := dialRedis(t, rs[2].addr)
	if got := r2.do("CONFIG", "SET", "min-replicas-to-write", "1"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET at r2: %q", got)
	}
	c := dialRedis(t, d.s.Addr("p").String())
	if got := c.do("SET", key, "refused"); !strings.HasPrefix(got, "-NOREPLICAS") {
		t.Fatalf("SET at r2 refusing writes: %q", got)
	}
	if got := r2.do("CONFIG", "SET", "min-replicas-to-write", "0"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET at r2: %q", got)
	}
	if got := c.do("GET", key); strings.Contains(got, "before") {
		t.Errorf("r0 out, a write refused at r2: the read answered %q, r2's copy of before the change", got)
	}
	d.restore("r0")
	if got := c.do("GET", key); strings.Contains(got, "before") {
		t.Errorf("r0 back: the read answered %q, r2's copy of before the change settled onto r0", got)
	}
}

// oldCopyAtTheStandIn starts the order of the fault schedule's seed 5639:
// a Redis cache under rehash and modula over r0..r3, p2:k15 set to
// "before" on r2, whose server it is; a cold change removes r1, and the
// key, r0's now, is set to "change" there, while r2 keeps "before" - and
// r2 stands in for r0 when r0 is out. It returns the pool, the servers
// and the key.
func oldCopyAtTheStandIn(t *testing.T) (*doublePool, []*redisServer, string) {
	t.Helper()
	settings := "  distribution: modula\n  hash: fnv1a_64\n  auto_eject_hosts: true\n  server_failure_limit: 1\n  timeout: 2000\n" +
		"  server_retry_timeout: 3600000\n"
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	d := &doublePool{t: t, proto: "redis", s: startProxy(t, redisPoolYAML(settings, rs...))}
	for _, r := range rs {
		d.servers = append(d.servers, r.addr)
	}
	d.p = d.s.testPool("p")
	d.redial()
	const key = "p2:k15"
	if got := modulaServerOf(t, d.p, key); got != "r2" {
		t.Fatalf("%s is %s's over r0..r3, not r2's", key, got)
	}
	d.setAll([]string{key}, "before")
	var b strings.Builder
	b.WriteString("p:\n  listen: 127.0.0.1:0\n  redis: true\n" + settings + "  servers:\n")
	for _, i := range []int{0, 2, 3} {
		fmt.Fprintf(&b, "   - %s:1 r%d\n", rs[i].addr, i)
	}
	after, err := ParseConfig([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.s.Reload(context.Background(), after); err != nil {
		t.Fatal(err)
	}
	d.p = d.s.testPool("p")
	if got := modulaServerOf(t, d.p, key); got != "r0" {
		t.Fatalf("%s is %s's once r1 is removed, not r0's", key, got)
	}
	if got := modulaServerOf(t, d.p, key, "r0"); got != "r2" {
		t.Fatalf("%s is %s's with r0 out, not r2's", key, got)
	}
	d.setAll([]string{key}, "change") // to r0; r2 keeps "before"
	return d, rs, key
}
