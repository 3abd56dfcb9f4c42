package sentinel_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/sentinel"
	"github.com/kolco-dev/kolco/membership/sentinel/sentineltest"
)

func source(c *sentineltest.Cluster) *sentinel.Source {
	var masters []kolco.Node
	for i, s := range c.Shards {
		masters = append(masters, kolco.Node{ID: s.Name, Weight: float64(i + 1)})
	}
	return &sentinel.Source{Sentinels: c.SentinelAddrs(), Masters: masters, Interval: 200 * time.Millisecond, Timeout: 500 * time.Millisecond}
}

// next returns the next version of w, failing after timeout.
func next(t *testing.T, w *membership.Watcher, timeout time.Duration) membership.Version {
	t.Helper()
	select {
	case v, ok := <-w.Versions():
		if !ok {
			t.Fatalf("the watch ended: %v", w.Close())
		}
		return v
	case <-time.After(timeout):
		t.Fatalf("no version within %v (status: %v)", timeout, w.Status())
	}
	return membership.Version{}
}

func addrOf(v membership.Version, id string) string {
	for _, n := range v.Nodes {
		if n.ID == id {
			return n.Addr
		}
	}
	return ""
}

// TestFollowFailovers: the source gives each master its primary, with
// the weight configured; a failover Sentinel makes (SENTINEL FAILOVER)
// and one after a primary is killed each give a version in which only
// that shard's address changed, to its promoted replica.
func TestFollowFailovers(t *testing.T) {
	c := sentineltest.Start(t, 1000*time.Millisecond, "shard-a", "shard-b")
	w := membership.Watch(context.Background(), source(c))
	defer w.Close()
	v := next(t, w, 10*time.Second)
	if len(v.Nodes) != 2 || addrOf(v, "shard-a") != c.Shards[0].Primary.Addr || addrOf(v, "shard-b") != c.Shards[1].Primary.Addr ||
		v.Nodes[1].Weight != 2 {
		t.Fatalf("first version %+v; primaries %s, %s", v.Nodes, c.Shards[0].Primary.Addr, c.Shards[1].Primary.Addr)
	}

	a := c.Shards[0]
	start := time.Now()
	if _, err := sentineltest.Do(c.Sentinels[0].Addr, "SENTINEL", "FAILOVER", a.Name); err != nil {
		t.Fatal(err)
	}
	promoted := a.WaitPromoted(t, 15*time.Second)
	v = next(t, w, 15*time.Second)
	t.Logf("SENTINEL FAILOVER: replica promoted after %v, the version with it after %v", promoted.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if addrOf(v, "shard-a") != a.Primary.Addr || addrOf(v, "shard-b") != c.Shards[1].Primary.Addr {
		t.Fatalf("after the failover %+v; want shard-a at %s", v.Nodes, a.Primary.Addr)
	}

	b := c.Shards[1]
	start = time.Now()
	b.Primary.Kill()
	v = next(t, w, 30*time.Second)
	t.Logf("primary killed: the version with its replica after %v (down-after %v)", time.Since(start).Round(time.Millisecond), c.DownAfter)
	if addrOf(v, "shard-b") != b.Replica.Addr || addrOf(v, "shard-a") != a.Primary.Addr {
		t.Fatalf("after the kill %+v; want shard-b at %s", v.Nodes, b.Replica.Addr)
	}
}

// TestSentinelsFailAndReturn: with one Sentinel of three left the source
// still answers; with none it reports them unreachable and keeps the
// view; when they return it is current again.
func TestSentinelsFailAndReturn(t *testing.T) {
	c := sentineltest.Start(t, 1000*time.Millisecond, "shard-a")
	w := membership.Watch(context.Background(), source(c))
	defer w.Close()
	next(t, w, 10*time.Second)
	c.Sentinels[0].Kill()
	c.Sentinels[1].Kill()
	time.Sleep(600 * time.Millisecond)
	if st := w.Status(); st.Stale() {
		t.Errorf("one Sentinel of three up: stale: %v", st)
	}
	c.Sentinels[2].Kill()
	waitStatus(t, w, func(st membership.Status) bool { return errors.Is(st.Err, membership.ErrUnreachable) }, "unreachable")
	for _, s := range c.Sentinels {
		s.Start(t)
	}
	waitStatus(t, w, func(st membership.Status) bool { return !st.Stale() }, "current")
}

func waitStatus(t *testing.T, w *membership.Watcher, ok func(membership.Status) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(realprog.Patience)
	for !ok(w.Status()) {
		if time.Now().After(deadline) {
			t.Fatalf("not %s within %v: %v", what, realprog.Patience, w.Status())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestUnknownMaster: a master no Sentinel knows is bad content, named.
func TestUnknownMaster(t *testing.T) {
	c := sentineltest.Start(t, 1000*time.Millisecond, "shard-a")
	s := source(c)
	s.Masters = append(s.Masters, kolco.Node{ID: "nope"})
	_, err := s.Read(context.Background())
	if !errors.Is(err, membership.ErrBadContent) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("Read: %v, want bad content naming \"nope\"", err)
	}
}

// TestDownAfter: the source reports each master's down-after-milliseconds
// as the Sentinels hold it, the least of them when they differ (SENTINEL
// SET on one), and none before it has asked.
func TestDownAfter(t *testing.T) {
	c := sentineltest.Start(t, 1500*time.Millisecond, "shard-a", "shard-b")
	s := source(c)
	if d := s.DownAfter("shard-a"); d != 0 {
		t.Errorf("before asking: %v, want 0", d)
	}
	if _, err := s.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"shard-a", "shard-b"} {
		if d := s.DownAfter(name); d != c.DownAfter {
			t.Errorf("%s: %v, want the Sentinels' %v", name, d, c.DownAfter)
		}
	}
	if _, err := sentineltest.Do(c.Sentinels[1].Addr, "SENTINEL", "SET", "shard-b", "down-after-milliseconds", "1200"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a, b := s.DownAfter("shard-a"), s.DownAfter("shard-b"); a != c.DownAfter || b != 1200*time.Millisecond {
		t.Errorf("after one Sentinel set shard-b's to 1200 ms: shard-a %v, shard-b %v; want %v and 1.2s", a, b, c.DownAfter)
	}
	if d := s.DownAfter("nope"); d != 0 {
		t.Errorf("a master not asked for: %v, want 0", d)
	}
}

// TestBadConfig: a source set up wrongly is refused before anything is
// asked.
func TestBadConfig(t *testing.T) {
	for name, s := range map[string]*sentinel.Source{
		"no sentinels":      {Masters: []kolco.Node{{ID: "a"}}},
		"no masters":        {Sentinels: []string{"127.0.0.1:1"}},
		"user, no pass":     {Sentinels: []string{"127.0.0.1:1"}, Masters: []kolco.Node{{ID: "a"}}, Username: "u"},
		"twice":             {Sentinels: []string{"127.0.0.1:1"}, Masters: []kolco.Node{{ID: "a"}, {ID: "a"}}},
		"negative weight":   {Sentinels: []string{"127.0.0.1:1"}, Masters: []kolco.Node{{ID: "a", Weight: -1}}},
		"space in a name":   {Sentinels: []string{"127.0.0.1:1"}, Masters: []kolco.Node{{ID: "a b"}}},
		"empty master name": {Sentinels: []string{"127.0.0.1:1"}, Masters: []kolco.Node{{ID: ""}}},
	} {
		if _, err := s.Read(context.Background()); !errors.Is(err, membership.ErrBadConfig) {
			t.Errorf("%s: %v, want ErrBadConfig", name, err)
		}
	}
}
