package mover

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// crossingPlan is a plan whose MIGRATEs wait out a short migrate timeout,
// whose first MIGRATE is held at gate, and which stops its run once it
// has seen limit failures.
type crossingPlan struct {
	*plan
	timeoutMs int
	gate      chan struct{}
	arrived   chan<- struct{}
	once      sync.Once
	limit     int
	stop      context.CancelFunc
}

func (p *crossingPlan) Migrate(dst string) ([][]byte, error) {
	ap, err := netip.ParseAddrPort(dst)
	if err != nil {
		return nil, err
	}
	return [][]byte{[]byte("MIGRATE"), []byte(ap.Addr().String()), []byte(strconv.Itoa(int(ap.Port()))), nil, []byte("0"),
		[]byte(strconv.Itoa(p.timeoutMs)), []byte("REPLACE")}, nil
}

func (p *crossingPlan) Hold(ctx context.Context, dst string) (func(), error) {
	p.once.Do(func() {
		p.arrived <- struct{}{}
		<-p.gate
	})
	return func() {}, nil
}

func (p *crossingPlan) Failed(dst string, err error) {
	p.plan.Failed(dst, err)
	p.mu.Lock()
	n := len(p.failed)
	p.mu.Unlock()
	if n >= p.limit {
		p.stop()
	}
}

// failures is how many failures the plan was told of.
func (p *crossingPlan) failures() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.failed)
}

// migrateWritten is a Dialer of addr whose connections report on written
// the first MIGRATE written on them.
func migrateWritten(addr string, written chan<- struct{}) Dialer {
	var once sync.Once
	return func(ctx context.Context) (net.Conn, error) {
		c, err := dialer(addr)(ctx)
		if err != nil {
			return nil, err
		}
		return &watchedConn{Conn: c, written: func(b []byte) {
			if bytes.Contains(b, []byte("MIGRATE")) {
				once.Do(func() { written <- struct{}{} })
			}
		}}, nil
	}
}

type watchedConn struct {
	net.Conn
	written func([]byte)
}

func (c *watchedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.written(b[:n])
	return n, err
}

// TestCrossingMigratesDoNotRetryInStep: two movers of a fleet, one moving
// A's keys to B while the other moves B's to A, send their MIGRATEs at
// once. A MIGRATE blocks its source until the target answers, so each
// waits for the other until migrate_timeout, and both fail at the same
// instant. Tried again after the same backoff, they crossed again, and
// again: seed 1074 of the fault schedule (three proxies, a change under
// modulo that moves keys between every pair of servers) saw its servers
// answer nothing for 2m13s, every proxy's SCANs timing out in step, six
// seconds apart. Here the first crossing of each of 8 rounds is forced
// (both servers stopped while the MIGRATEs are written, then continued);
// after it, the movers must not cross again but by chance. In step, they
// crossed again in most rounds: with a first backoff of 50 ms, 15 to 31
// failures in 6 rounds (a round giving up at 6), once still crossing
// after 40 s; drawn at random, 5 to 10 (of which 6 forced). On a machine
// at a load of 20 to 30 a server waits tens of milliseconds for a core,
// and retries that far apart still cross; so the first backoff here is
// 1 s, where in step they failed 9 to 14 times in 6 rounds and drawn at
// random 6 (a crossing forced in each), and a round gives up at 3.
func TestCrossingMigratesDoNotRetryInStep(t *testing.T) {
	const rounds = 8
	failed := [2]int{}
	for round := range rounds {
		n := crossOnce(t)
		t.Logf("round %d: %d and %d MIGRATEs failed", round, n[0], n[1])
		failed[0] += n[0]
		failed[1] += n[1]
	}
	// One failure a round is the crossing forced; a few more are
	// allowed, for retries that met again by chance: on a busy machine a
	// server waits for its turn on a core for milliseconds, and two
	// retries that close together still cross.
	for i, n := range failed {
		if n > rounds+2 {
			t.Errorf("mover %d: %d MIGRATEs failed in %d rounds, each forcing one crossing: they retried in step", i, n, rounds)
		}
	}
}

// crossOnce starts two servers, A and B, and runs two movers at once,
// one from each to the other, with their first MIGRATEs written while
// both servers are stopped; it returns how many MIGRATEs each saw fail.
// The servers are new each time: Redis keeps a MIGRATE's connection to
// its target for 10 s, and a target reached on a kept connection can
// read the RESTORE before its own MIGRATE, which then does not cross.
func crossOnce(t *testing.T) [2]int {
	t.Helper()
	const keys = 20
	a, aProc := startRedisProc(t)
	b, bProc := startRedisProc(t)
	servers, procs := [2]string{a, b}, [2]*os.Process{aProc, bProc}
	for i, addr := range servers {
		dial(t, addr).pipeline(keys, func(k int) []string { return []string{"SET", fmt.Sprintf("%d-%d", i, k), "v"} })
	}
	gate := make(chan struct{})
	arrived, written := make(chan struct{}, 2), make(chan struct{}, 2)
	cfg := Config{Conns: 1, MinBatch: 100, MaxBatch: 100, Backoff: time.Second}
	var plans [2]*crossingPlan
	done := make(chan error, 2)
	for i, src := range servers {
		dst := servers[1-i]
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		p := &crossingPlan{plan: &plan{dest: func([]byte) string { return dst }}, timeoutMs: 200, gate: gate, arrived: arrived,
			limit: 3, stop: stop}
		plans[i] = p
		go func() { done <- Run(ctx, migrateWritten(src, written), p, cfg) }()
	}
	<-arrived
	<-arrived
	for _, p := range procs {
		if err := p.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	close(gate)
	<-written
	<-written
	for _, p := range procs {
		if err := p.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	for i, addr := range servers {
		c := dial(t, addr)
		if n, other := c.dbsize(), c.do("EXISTS", fmt.Sprintf("%d-0", 1-i)); n != keys || other != ":1" {
			t.Errorf("server %d holds %d keys (want %d), the other's first key: %s (want :1)", i, n, keys, other)
		}
	}
	return [2]int{plans[0].failures(), plans[1].failures()}
}
