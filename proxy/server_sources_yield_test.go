package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// listingHold is a link to a memcached server that holds one listing
// (lru_crawler metadump) once armed, as a slow link holds a listing of a
// large server: the command reaches the server only when the hold is
// released, or the test ends.
type listingHold struct {
	addr    string
	armed   atomic.Bool
	held    chan struct{} // receives once the armed listing is held
	release chan struct{} // closed to let it go on
	once    sync.Once
	// refuse, while set, closes the connection of every listing instead,
	// as a link that resets; refused receives when it does.
	refuse  atomic.Bool
	refused chan struct{}
}

// holdListing relays a loopback port to the memcached server at upstream
// until the test ends.
func holdListing(t *testing.T, upstream string) *listingHold {
	h := &listingHold{held: make(chan struct{}, 1), release: make(chan struct{}), refused: make(chan struct{}, 1)}
	t.Cleanup(h.let)
	h.addr = fakeServer(t, func(c net.Conn) {
		up, err := net.Dial("tcp", upstream)
		if err != nil {
			c.Close()
			return
		}
		defer up.Close()
		go func() {
			_, _ = io.Copy(c, up)
			c.Close()
		}()
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if strings.HasPrefix(line, "lru_crawler metadump") && h.refuse.Load() {
				select {
				case h.refused <- struct{}{}:
				default:
				}
				c.Close()
				return
			}
			if strings.HasPrefix(line, "lru_crawler metadump") && h.armed.CompareAndSwap(true, false) {
				h.held <- struct{}{}
				<-h.release
			}
			if len(line) > 0 {
				if _, werr := io.WriteString(up, line); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	})
	return h
}

// let releases the held listing.
func (h *listingHold) let() { h.once.Do(func() { close(h.release) }) }

// within runs f and reports whether it returned within d.
func within(d time.Duration, f func()) (<-chan struct{}, bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
		return done, true
	case <-time.After(d):
		return done, false
	}
}

// slowApply starts a proxy whose pool follows a file source with the
// sweep on, serving n0 (behind a listingHold) and n1, then changes the
// file to add n2 and returns once the change's prepare is listing n0,
// held there: the source's version being applied holds the server's lock.
// budget is what the machine takes for a proxy's start, times a margin.
//
// Ports are chosen for a handover, which finds the sockets by their
// configured addresses; otherwise 0, which no other test can take first.
func slowApply(t *testing.T, handover bool) (s *Server, yaml string, hold *listingHold, budget time.Duration) {
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	hold = holdListing(t, ms[0].addr)
	path := filepath.Join(t.TempDir(), "members.yml")
	n0 := &memcached{addr: hold.addr}
	writeServers(t, path, n0, ms[1])
	adminPort, port := 0, 0
	if handover {
		adminPort, port = freePort(t), freePort(t)
	}
	yaml = fmt.Sprintf("kolco:\n  admin_listen: 127.0.0.1:%d\np:\n  listen: 127.0.0.1:%d\n  distribution: bounded\n  timeout: 1000\n"+
		"  sweep: {exclusive: [\"*\"]}\n  servers:\n   - %s:1 n0\n  membership: {file: {path: %s, interval: 20, settle: 40}}\n",
		adminPort, port, hold.addr, path)
	start := time.Now()
	s = startProxy(t, yaml)
	eventually(t, "the file's first version served", func() bool { return membershipOf(t, s, "p").Revision == 1 })
	budget = max(20*time.Since(start), 10*time.Second)
	hold.armed.Store(true)
	writeServers(t, path, n0, ms[1], ms[2])
	select {
	case <-hold.held:
	case <-time.After(budget):
		t.Fatalf("the change adding n2 listed no server within %v", budget)
	}
	return s, yaml, hold, budget
}

// TestHandOverDuringSlowApply: a handover - the sockets' files, a new
// process serving on them, the clients handed to it, the old one shut
// down - does not wait for a membership source's version being applied
// whose prepare lists a server over a slow link, and the new process
// serves that version. Before, the apply held the server's lock through
// the listing, and ListenerFiles, HandOver and Shutdown waited for it (a
// fault schedule's seed 877: two handovers that took a minute).
func TestHandOverDuringSlowApply(t *testing.T) {
	t.Parallel()
	old, y, hold, budget := slowApply(t, true)
	var next *Server
	var failed error
	done, ok := within(budget, func() {
		failed = func() error {
			files, err := old.ListenerFiles()
			if err != nil {
				return err
			}
			lns := map[string]net.Listener{}
			for key, f := range files {
				if lns[key], err = net.FileListener(f); err != nil {
					return err
				}
				f.Close()
			}
			cfg, err := ParseConfig([]byte(y))
			if err != nil {
				return err
			}
			next = New(cfg, nil)
			next.Inherit(lns)
			if err := next.Start(); err != nil {
				return err
			}
			<-next.Serving()
			ours, theirs, err := unixPair()
			if err != nil {
				return err
			}
			next.Adopt(theirs)
			old.HandOver(ours)
			return old.Shutdown(context.Background())
		}()
	})
	if !ok {
		hold.let()
		<-done
		t.Fatalf("the handover and shutdown were not done %v after they began: they waited for the listing of the version being applied", budget)
	}
	if failed != nil {
		t.Fatal(failed)
	}
	t.Cleanup(func() { _ = next.Shutdown(context.Background()) })
	eventually(t, "the new process serving the version adding n2", func() bool {
		ms := membershipOf(t, next, "p")
		return slices.Equal(ms.Nodes, []string{"n0", "n1", "n2"}) && !ms.Stale
	})
}

// TestSlowApplyYields: what needs the server's lock and must not wait on
// a slow server - a shutdown, the steps of a handover, a reload - ends a
// source's version being applied whose listing is slow, and the version
// is served afterwards, without a new version of the source: applied
// again by the source's loop, or by the reload itself. Config, which a
// process's signal loop reads every second, does not wait for the lock:
// the apply goes on, and serves the version once its listing is let go.
func TestSlowApplyYields(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		take func(*Server, string) error
		// goesOn: the apply is not ended; its listing is let go after.
		goesOn bool
	}{
		{"Config", func(s *Server, _ string) error {
			if s.Config() == nil {
				return errors.New("no configuration")
			}
			return nil
		}, true},
		{"ListenerFiles", func(s *Server, _ string) error {
			files, err := s.ListenerFiles()
			for _, f := range files {
				f.Close()
			}
			return err
		}, false},
		{"Views", func(s *Server, _ string) error { s.Views(); return nil }, false},
		{"Reload", func(s *Server, y string) error {
			cfg, err := ParseConfig([]byte(y))
			if err != nil {
				return err
			}
			return s.Reload(context.Background(), cfg)
		}, false},
		{"Shutdown", func(s *Server, _ string) error { return s.Shutdown(context.Background()) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, y, hold, budget := slowApply(t, false)
			var err error
			done, ok := within(budget, func() { err = tc.take(s, y) })
			if !ok {
				hold.let()
				<-done
				t.Fatalf("not done %v after it began: it waited for the listing of the version being applied", budget)
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "Shutdown" {
				return
			}
			if tc.goesOn {
				hold.let()
			}
			eventually(t, "the version adding n2 served", func() bool {
				ms := membershipOf(t, s, "p")
				return slices.Equal(ms.Nodes, []string{"n0", "n1", "n2"}) && !ms.Stale
			})
		})
	}
}

// unixPair returns the two ends of a unix socket, as a handover's.
func unixPair() (*net.UnixConn, *net.UnixConn, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	var ends [2]*net.UnixConn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "handover")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			return nil, nil, err
		}
		ends[i] = c.(*net.UnixConn)
	}
	return ends[0], ends[1], nil
}

// TestFailedReloadTriedAgainYields: a failed reload tried again in the
// background, whose prepare lists a server over a slow link, is ended by
// what needs the server's lock - here ListenerFiles, as a handover
// begins - and is tried again after it, and applied. Before, the try held
// the lock through the listing.
func TestFailedReloadTriedAgainYields(t *testing.T) {
	t.Parallel()
	m0 := startMemcached(t, 0)
	hold := holdListing(t, m0.addr)
	port := freePort(t) // the added server's, nothing listening there yet
	start := time.Now()
	s := startProxy(t, reloadRetryYAML(hold.addr))
	budget := max(20*time.Since(start), 10*time.Second)
	var ce *ConfigError
	if err := s.ReloadData(context.Background(), "kolco.yml", []byte(reloadRetryYAML(hold.addr, fmt.Sprintf("127.0.0.1:%d", port)))); err == nil || errors.As(err, &ce) {
		t.Fatalf("a reload adding an exclusive server that cannot be reached: %v, want a failure that may pass", err)
	}
	startMemcached(t, port) // the added server can be emptied now
	hold.armed.Store(true)
	select {
	case <-hold.held:
	case <-time.After(budget + reloadRetryMost):
		t.Fatalf("the reload tried again listed no server within %v", budget+reloadRetryMost)
	}
	done, ok := within(budget, func() {
		files, _ := s.ListenerFiles()
		for _, f := range files {
			f.Close()
		}
	})
	if !ok {
		hold.let()
		<-done
		t.Fatalf("ListenerFiles was not done %v after it began: it waited for the listing of the reload tried again", budget)
	}
	eventually(t, "the reload tried again once more and applied", func() bool { return liveCount(s) == 2 })
}
