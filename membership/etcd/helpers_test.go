package etcd_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/etcd"
	"github.com/kolco-dev/kolco/membership/etcdtest"
)

// busy is the machine's load when the tests start (realprog.Busy): the
// bounds below are stretched by it, so that a busy machine makes the tests
// slower, not failed. At 8 busy processes on 2 cores, with the fixed
// figures, a progress request went unanswered in 100 ms and a status read
// as stale where the test waited for a bad value's report, and a writer's
// Update ran out of its 6 s.
var busy = realprog.Busy()

// bound limits every wait on our own goroutines: the failure path of a
// test that would otherwise hang.
var bound = time.Duration(busy * float64(15*time.Second))

// checkInterval is the stores' progress check in these tests: short, so
// that staleness shows quickly.
var checkInterval = time.Duration(busy * float64(100*time.Millisecond))

func newStore(t *testing.T, endpoint, prefix string) *etcd.Store {
	t.Helper()
	return newStoreWith(t, etcd.Config{Endpoints: []string{endpoint}, Prefix: prefix})
}

func newStoreWith(t *testing.T, cfg etcd.Config) *etcd.Store {
	t.Helper()
	if cfg.CheckInterval == 0 {
		cfg.CheckInterval = checkInterval
	}
	if cfg.Timeout == 0 {
		// Generous: a TLS handshake and an authentication on a busy
		// machine took longer than 2 s; a test of a timeout sets its own.
		cfg.Timeout = time.Duration(busy * float64(6*time.Second))
	}
	s, err := etcd.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rawClient is a plain etcd client for what the store does not do: raw
// puts of bad values, compaction.
func rawClient(t *testing.T, srv *etcdtest.Server) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Endpoint}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func watch(t *testing.T, s *etcd.Store) *membership.Watcher {
	t.Helper()
	w := membership.Watch(context.Background(), s)
	t.Cleanup(func() { w.Close() })
	return w
}

// next returns the watcher's next version.
func next(t *testing.T, w *membership.Watcher) membership.Version {
	t.Helper()
	select {
	case v, ok := <-w.Versions():
		if !ok {
			t.Fatalf("watcher stopped: %v", w.Close())
		}
		return v
	case <-time.After(bound):
		t.Fatalf("no version in %v; status: %v", bound, w.Status())
	}
	return membership.Version{}
}

// noVersion fails the test if a version is waiting to be taken.
func noVersion(t *testing.T, w *membership.Watcher) {
	t.Helper()
	select {
	case v := <-w.Versions():
		t.Fatalf("unexpected version %v", v)
	default:
	}
}

// waitStatus polls the watcher's status until cond holds: what changes it
// is an external process (etcd stopping, a lease expiring) or a timer.
func waitStatus(t *testing.T, w *membership.Watcher, what string, cond func(membership.Status) bool) membership.Status {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		st := w.Status()
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; status: %v", what, bound, st)
		}
		time.Sleep(5 * time.Millisecond) // polling on an external process, with a deadline
	}
}

// checkNoLeak fails the test if it leaves goroutines behind, once every
// cleanup registered after it has run.
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

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), bound)
	t.Cleanup(cancel)
	return c
}
