package proxy

import (
	"bufio"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// TestStartWaitsForFirstVersionTriedAgain: a proxy started afresh whose
// source's first version could not be applied yet - a server it keeps
// could not be listed - keeps its clients waiting until the version is
// applied on a later try, rather than answer them from its configured
// servers meanwhile. Before, the refusal opened the accept gate as a
// version the pool cannot serve does, and the configured servers, which
// no source named, answered with the values they held (a fault
// schedule's seed 877: a proxy killed and started again answered from
// them for two seconds, 2 stale reads).
func TestStartWaitsForFirstVersionTriedAgain(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	hold := holdListing(t, ms[0].addr)
	hold.refuse.Store(true)
	keys := make([]string, 40)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
		// The configured server holds values from before; the file's
		// second server the values written since.
		dialDirect(t, ms[0]).set(keys[i], "old")
		dialDirect(t, ms[1]).set(keys[i], "new")
	}
	path := filepath.Join(t.TempDir(), "members.yml") // not written yet: the source gives no version
	// The servers' timeout scales with the load: a get of the new
	// server's keys timed out at 1 s under 8 busy processes on 2 cores,
	// and its keys read as misses, which say nothing of the gate.
	s := startProxy(t, fmt.Sprintf("kolco:\n  admin_listen: 127.0.0.1:0\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  timeout: %d\n"+
		"  sweep: {exclusive: [\"*\"]}\n  servers:\n   - %s:1 n0\n  membership: {file: {path: %s, interval: 20, settle: 40}}\n", int(1000*realprog.Busy()), hold.addr, path))
	c, err := net.Dial("tcp", s.Addr("p").String()) // queued on the socket the server has not accepted on
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("get " + strings.Join(keys, " ") + "\r\n")); err != nil {
		t.Fatal(err)
	}
	writeServers(t, path, &memcached{addr: hold.addr}, ms[1])
	select {
	case <-hold.refused:
	case <-time.After(sourceWait):
		t.Fatalf("the first version's listing of n0 not tried within %v", sourceWait)
	}
	hold.refuse.Store(false) // the version is applied on its next try
	_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
	got := map[string]string{}
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the waiting client's request: %v after %v", err, got)
		}
		if line == "END\r\n" {
			break
		}
		var key, value string
		var flags, size int
		if _, err := fmt.Sscanf(line, "VALUE %s %d %d", &key, &flags, &size); err != nil {
			t.Fatalf("reply line %q: %v", line, err)
		}
		if value, err = r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		got[key] = strings.TrimSpace(value)
	}
	eventually(t, "the file's version served", func() bool {
		ms := membershipOf(t, s, "p")
		return slices.Equal(ms.Nodes, []string{"n0", "n1"}) && !ms.Stale
	})
	p := s.testPool("p")
	for _, k := range keys {
		want := "old"
		if ownerOf(p, k) == ms[1].addr {
			want = "new"
		}
		switch {
		case got[k] == want:
		case got[k] == "":
			t.Errorf("%s missed, want %q from its owner by the file's version: its owner did not answer in time, or lost it", k, want)
		default:
			t.Errorf("%s read %q, want %q from its owner by the file's version: answered before the version was served", k, got[k], want)
		}
	}
}
