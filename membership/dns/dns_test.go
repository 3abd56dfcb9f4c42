package dns_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"

	mdns "github.com/miekg/dns"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/dns"
	"github.com/kolco-dev/kolco/membership/dns/dnstest"
)

func set(t *testing.T, s *dnstest.Server, qtype uint16, rrs ...string) {
	t.Helper()
	if err := s.Set(qtype, rrs...); err != nil {
		t.Fatal(err)
	}
}

const svc = "_memcache._tcp.mc.default.svc.cluster.local."

// srv returns an SRV record of svc pointing at target with weight w, as
// CoreDNS writes them for a headless service.
func srv(w int, target string, port int) string {
	return fmt.Sprintf("%s 5 IN SRV 0 %d %d %s", svc, w, port, target)
}

func pods(n int) []string {
	rrs := make([]string, n)
	for i := range rrs {
		rrs[i] = srv(100/n, fmt.Sprintf("mc-%d.mc.default.svc.cluster.local.", i), 11211)
	}
	return rrs
}

func ids(v membership.Version) []string { return v.IDs() }

func TestSRVNamesNodesByTarget(t *testing.T) {
	s := dnstest.Start(t)
	set(t, s, mdns.TypeSRV, pods(3)...)
	v, err := (&dns.Source{Name: svc, Resolver: s.Resolver()}).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []kolco.Node{
		{ID: "mc-0.mc.default.svc.cluster.local", Addr: "mc-0.mc.default.svc.cluster.local:11211"},
		{ID: "mc-1.mc.default.svc.cluster.local", Addr: "mc-1.mc.default.svc.cluster.local:11211"},
		{ID: "mc-2.mc.default.svc.cluster.local", Addr: "mc-2.mc.default.svc.cluster.local:11211"},
	}
	if !slices.Equal(v.Nodes, want) {
		t.Errorf("nodes %+v\nwant %+v", v.Nodes, want)
	}
}

// TestSRVWeights: CoreDNS gives each of n endpoints weight floor(100/n).
// Ignored by default, a scale event re-weights nothing; enabled, the
// weights are taken as they are.
func TestSRVWeights(t *testing.T) {
	s := dnstest.Start(t)
	for _, use := range []bool{false, true} {
		t.Run(fmt.Sprintf("UseWeights=%v", use), func(t *testing.T) {
			src := &dns.Source{Name: svc, Resolver: s.Resolver(), UseWeights: use}
			for _, n := range []int{3, 4} {
				set(t, s, mdns.TypeSRV, pods(n)...)
				v, err := src.Read(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for _, node := range v.Nodes {
					want := 0.0
					if use {
						want = float64(100 / n)
					}
					if node.Weight != want {
						t.Errorf("%d pods: %s has weight %v, want %v", n, node.ID, node.Weight, want)
					}
				}
			}
		})
	}
}

// TestSRVManyPodsOverTCP: an answer too large for UDP is truncated and
// read again over TCP, as a large StatefulSet's would be.
func TestSRVManyPodsOverTCP(t *testing.T) {
	s := dnstest.Start(t)
	set(t, s, mdns.TypeSRV, pods(200)...)
	v, err := (&dns.Source{Name: svc, Resolver: s.Resolver()}).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Nodes) != 200 {
		t.Errorf("%d nodes, want 200", len(v.Nodes))
	}
}

func TestARecordsNeedStableAddresses(t *testing.T) {
	s := dnstest.Start(t)
	set(t, s, mdns.TypeA, "mc.example. 5 IN A 10.0.0.2", "mc.example. 5 IN A 10.0.0.1")
	set(t, s, mdns.TypeAAAA, "mc.example. 5 IN AAAA fd00::7")
	_, err := (&dns.Source{Name: "mc.example.", Records: dns.A, Port: 11211, Resolver: s.Resolver()}).Read(context.Background())
	if !errors.Is(err, dns.ErrUnstableName) || !errors.Is(err, membership.ErrBadConfig) {
		t.Fatalf("A records without StableAddresses: %v, want ErrUnstableName and ErrBadConfig", err)
	}
	v, err := (&dns.Source{Name: "mc.example.", Records: dns.A, Port: 11211, StableAddresses: true, Resolver: s.Resolver()}).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"10.0.0.1:11211", "10.0.0.2:11211", "[fd00::7]:11211"}; !slices.Equal(ids(v), want) {
		t.Errorf("nodes %v, want %v", ids(v), want)
	}
}

func TestBadAnswers(t *testing.T) {
	for _, c := range []struct {
		name    string
		records []string
		src     dns.Source
	}{
		{"address-derived target", []string{srv(50, "10-0-0-7.mc.default.svc.cluster.local.", 11211)}, dns.Source{}},
		{"address-derived IPv6 target", []string{srv(50, "fd00--7.mc.default.svc.cluster.local.", 11211)}, dns.Source{}},
		{"port 0", []string{srv(50, "mc-0.mc.", 0)}, dns.Source{}},
		{"two ports for one target", []string{srv(50, "mc-0.mc.", 1), srv(50, "mc-0.mc.", 2)}, dns.Source{}},
		{"weight 0 with weights on", []string{srv(0, "mc-0.mc.", 1)}, dns.Source{UseWeights: true}},
		{"invalid target name", []string{srv(50, "mc-0.mc.", 1), srv(50, `bad\!name.mc.`, 1)}, dns.Source{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := dnstest.Start(t)
			set(t, s, mdns.TypeSRV, c.records...)
			src := c.src
			src.Name, src.Resolver = svc, s.Resolver()
			v, err := src.Read(context.Background())
			if !errors.Is(err, membership.ErrBadContent) {
				t.Fatalf("got %v, %v; want ErrBadContent", v, err)
			}
		})
	}
}

func TestNoRecordsIsNoNodes(t *testing.T) {
	s := dnstest.Start(t)
	for _, records := range [][]string{nil, {srv(0, ".", 0)}} {
		set(t, s, mdns.TypeSRV, records...)
		v, err := (&dns.Source{Name: svc, Resolver: s.Resolver()}).Read(context.Background())
		if err != nil || len(v.Nodes) != 0 {
			t.Errorf("records %q: %v, %v; want no nodes", records, v, err)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		src  dns.Source
	}{
		{"no name", dns.Source{}},
		{"unknown records", dns.Source{Name: "x.", Records: "MX"}},
		{"port with SRV", dns.Source{Name: "x.", Port: 1}},
		{"A without port", dns.Source{Name: "x.", Records: dns.A, StableAddresses: true}},
		{"A with weights", dns.Source{Name: "x.", Records: dns.A, StableAddresses: true, Port: 1, UseWeights: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := c.src.Read(context.Background()); !errors.Is(err, membership.ErrBadConfig) {
				t.Errorf("got %v, want ErrBadConfig", err)
			}
		})
	}
}

// TestFollowKeepsLastViewWhileTheServerFails: a server that fails or
// stops answering leaves the last view in place, reported stale; when it
// answers again the watcher catches up.
func TestFollowKeepsLastViewWhileTheServerFails(t *testing.T) {
	checkNoLeak(t)
	s := dnstest.Start(t)
	set(t, s, mdns.TypeSRV, pods(3)...)
	src := &dns.Source{Name: svc, Resolver: s.Resolver(), Interval: 20 * time.Millisecond, Timeout: 200 * time.Millisecond}
	w := membership.Watch(context.Background(), src)
	defer w.Close()
	first := next(t, w)
	if len(first.Nodes) != 3 || first.Revision != 1 || !first.Resync {
		t.Fatalf("first version %v", first)
	}

	for _, fault := range []struct {
		name   string
		rcode  int
		silent bool
	}{{"SERVFAIL", mdns.RcodeServerFailure, false}, {"no answer", 0, true}} {
		s.Fail(fault.rcode, fault.silent)
		st := waitStatus(t, w, func(st membership.Status) bool { return st.Stale() })
		if !errors.Is(st.Err, membership.ErrUnreachable) || st.Revision != first.Revision {
			t.Errorf("%s: status %v, want unreachable at revision %d", fault.name, st, first.Revision)
		}
		s.Fail(0, false)
		waitStatus(t, w, func(st membership.Status) bool { return !st.Stale() })
	}

	set(t, s, mdns.TypeSRV, pods(4)...)
	if v := next(t, w); len(v.Nodes) != 4 || v.Revision != 2 || v.Resync {
		t.Fatalf("after scaling to 4: %v", v)
	}
	set(t, s, mdns.TypeSRV, srv(50, "10-0-0-9.mc.", 11211))
	st := waitStatus(t, w, func(st membership.Status) bool { return st.Stale() })
	if !errors.Is(st.Err, membership.ErrBadContent) || st.Revision != 2 {
		t.Errorf("after a bad answer: %v, want ErrBadContent at revision 2", st)
	}
}

// waitStatus polls the watcher's status until cond holds. The source
// polls a server on its own timer, so there is no event to wait on.
func waitStatus(t *testing.T, w *membership.Watcher, cond func(membership.Status) bool) membership.Status {
	t.Helper()
	deadline := time.Now().Add(realprog.Patience)
	for {
		st := w.Status()
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never changed as expected: %v", st)
		}
		time.Sleep(5 * time.Millisecond) // polling a status driven by a timer, with a deadline
	}
}

func next(t *testing.T, w *membership.Watcher) membership.Version {
	t.Helper()
	select {
	case v, ok := <-w.Versions():
		if !ok {
			t.Fatalf("watcher stopped: %v", w.Close())
		}
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no version; status %v", w.Status())
	}
	return membership.Version{}
}

func checkNoLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines left, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(10 * time.Millisecond) // waiting for exits already under way
		}
	})
}
