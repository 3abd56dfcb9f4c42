package proxy

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// TestSweepRunsWhileAClientReadsNoReplies: a client that pipelines gets of
// a big value and never reads its replies holds requests of the running
// pool while a change adds a server; the change's sweep must still run and
// remove the copies the change left on servers that no longer own them.
// Before, the sweep waited for the replaced pool's requests to be counted
// out, which happened only once their replies were written to the client:
// never, so the change's orphans stayed, and every later change's sweep
// waited too.
func TestSweepRunsWhileAClientReadsNoReplies(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	extra := "  distribution: ring\n  warm: {enabled: false}\n  sweep: {exclusive: [\"*\"]}\n"
	s := startProxy(t, c.yaml(extra, 0, 1, 2))
	cl := dial(t, s.Addr("p").String())
	keys := testKeys("stuck-sweep", 300)
	for _, k := range keys {
		setValue(cl, k, "v0", 0, 0)
	}
	big := strings.Repeat("x", 256<<10)
	setValue(cl, "stuck-big", big, 0, 0)

	old := s.testPool("p")
	const gets = 300
	stalled := stallClient(t, s.Addr("p").String(), "get stuck-big\r\n", gets)
	// Its replies (75 MiB) are far more than the sockets hold (a few MiB
	// each way on loopback) and the client's buffer limit (64 MiB): the
	// pool keeps some of its gets in flight while it stays.
	eventually(t, "the stalled client's gets in flight", func() bool { return old.requests.refs.Load() > 0 })

	reload(t, s, c.yaml(extra, 0, 1, 2, 3)) // m3 added: it takes keys from the others
	p := s.testPool("p")
	if p == old {
		t.Fatal("the reload did not replace the pool")
	}
	// Each key the change moved left its copy, an orphan, on its server
	// before: only the sweep removes it.
	was, now := routeNames(old, keys), routeNames(p, keys)
	orphans := 0
	for i := range keys {
		if was[i] != now[i] {
			orphans++
		}
	}
	if orphans == 0 {
		t.Fatal("the change moved no key")
	}
	// A bound on what must happen, not a measure of how soon: the sweep
	// lists four servers of a few hundred keys.
	swept := waitUpTo(20*time.Second, func() bool { return p.place.Load().mig == nil })
	st := p.mig.stats
	why := "none"
	if w := st.deferWhy.Load(); w != nil {
		why = *w
	}
	left := 0
	for _, o := range census(t, c, p) {
		left += len(o)
	}
	t.Logf("orphans after the change %d, left %d; listed %d, deleted %d; replaced pool's requests in flight %d; waiting: %s",
		orphans, left, st.listed.Load(), st.deleted.Load(), old.requests.refs.Load()&(closingBit-1), why)
	if !swept {
		t.Fatalf("the change's sweep did not run while a client read no replies (waiting: %s)", why)
	}
	if left != 0 {
		t.Errorf("%d of %d orphans left on servers that do not own them after the sweep", left, orphans)
	}
	// The client reads at last: every reply is there, in order.
	if n, err := readValues(stalled, gets, len(big), 20*time.Second); n != gets {
		t.Errorf("the client that read late got %d of its %d replies: %v", n, gets, err)
	}
}

// stallClient connects a client to addr that sends req n times and reads
// nothing until the test reads its replies; its connection closes as the
// test ends.
func stallClient(t *testing.T, addr, req string, n int) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Write([]byte(strings.Repeat(req, n))); err != nil {
		t.Fatal(err)
	}
	return conn
}

// readValues reads n replies of one VALUE of size bytes from conn, within
// d, and returns how many it read whole.
func readValues(conn net.Conn, n, size int, d time.Duration) (int, error) {
	_ = conn.SetReadDeadline(time.Now().Add(d))
	r := bufio.NewReader(conn)
	for i := range n {
		line, err := r.ReadString('\n')
		if err != nil {
			return i, err
		}
		var key string
		var flags, got int
		if _, err := fmt.Sscanf(line, "VALUE %s %d %d\r\n", &key, &flags, &got); err != nil || got != size {
			return i, fmt.Errorf("reply %d: %q", i, line)
		}
		if _, err := r.Discard(size + 2); err != nil {
			return i, err
		}
		if end, err := r.ReadString('\n'); err != nil || end != "END\r\n" {
			return i, fmt.Errorf("reply %d ends with %q: %v", i, end, err)
		}
	}
	return n, nil
}

// waitUpTo polls cond until it holds or d has passed, and reports whether
// it held.
func waitUpTo(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
