package proxy

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestStoreMoveLatency measures a store's move under load, with
// KOLCO_STORE_LONG=1: eight closed-loop clients GET and SET 100,000 keys
// through a store of 4 redis-servers, steady, then while a fifth server is
// added and the keys that change owner move, then while a 100 MB hash
// moves; it logs each phase's requests a second and p50/p99/max latency,
// and the keys moved a second.
func TestStoreMoveLatency(t *testing.T) {
	if os.Getenv("KOLCO_STORE_LONG") == "" {
		t.Skip("set KOLCO_STORE_LONG=1 to measure a store's move under load")
	}
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	yaml := func(servers []*redisServer) string {
		return "kolco:\n  admin_listen: 127.0.0.1:0\n" + redisPoolYAML("  distribution: ring\n  timeout: 10000\n  store: {enabled: true}\n", servers...)
	}
	s := startProxy(t, yaml(rs[:4]))
	addr := s.Addr("p").String()
	const nkeys = 100_000
	value := strings.Repeat("v", 100)
	c := dialRedis(t, addr)
	pipeline(t, c, nkeys, func(i int) []string { return []string{"SET", fmt.Sprintf("key:%d", i), value} })
	l := startLatencyLoad(t, addr, 8, nkeys, value, 0)
	defer l.stop()
	l.phase("steady", func() { time.Sleep(5 * time.Second) })
	var moved int64
	l.phase("4 -> 5 servers, keys moving", func() {
		reload(t, s, yaml(rs))
		m := moveOf(s.testPool("p").place.Load())
		waitMovedLong(t, s)
		moved = m.stats.moved.Load() + m.stats.onRequest.Load()
	})
	t.Logf("moved %d keys in that phase", moved)
	// A 100 MB hash on a key whose owner changes when the fifth server goes.
	big := ""
	for i := 0; big == ""; i++ {
		k := fmt.Sprintf("bighash:%d", i)
		if ownerOf(s.testPool("p"), k) == rs[4].addr {
			big = k
		}
	}
	field := strings.Repeat("f", 1000)
	pipeline(t, c, 100_000, func(i int) []string { return []string{"HSET", big, fmt.Sprintf("%d", i), field} })
	t.Logf("%s: %s bytes (MEMORY USAGE)", big, strings.TrimSpace(dialRedis(t, rs[4].addr).do("MEMORY", "USAGE", big, "SAMPLES", "0")))
	l.phase("steady, with the hash", func() { time.Sleep(3 * time.Second) })
	l.phase("5 -> 4 servers, the hash moving", func() {
		reload(t, s, yaml(rs[:4]))
		waitMovedLong(t, s)
	})
}

// pipeline sends n commands, 1000 at a time, and reads their replies.
func pipeline(t testing.TB, c *rc, n int, cmd func(i int) []string) {
	t.Helper()
	for i := range n {
		c.send(cmd(i)...)
		if i%1000 == 999 || i == n-1 {
			for range i%1000 + 1 {
				if _, err := c.read(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// latencyLoad is clients sending GET and SET (one in four) of random keys,
// one request at a time, recording each request's latency: closed-loop
// clients, each sending its next request as the last is answered, or
// paced ones that wait pace after each reply.
type latencyLoad struct {
	t     testing.TB
	mu    sync.Mutex
	lat   []time.Duration
	done  atomic.Bool
	wg    sync.WaitGroup
	nkeys int
	value string
	pace  time.Duration
}

func startLatencyLoad(t testing.TB, addr string, clients, nkeys int, value string, pace time.Duration) *latencyLoad {
	l := &latencyLoad{t: t, nkeys: nkeys, value: value, pace: pace}
	for g := range clients {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			if err := l.client(addr, uint64(g)); err != nil {
				t.Error(err)
			}
		}()
	}
	return l
}

func (l *latencyLoad) client(addr string, seed uint64) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	rng := rand.New(rand.NewPCG(seed, 1))
	for !l.done.Load() {
		k := fmt.Sprintf("key:%d", rng.IntN(l.nkeys))
		req := fmt.Sprintf("*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(k), k)
		if rng.IntN(4) == 0 {
			req = fmt.Sprintf("*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(k), k, len(l.value), l.value)
		}
		start := time.Now()
		if _, err := conn.Write([]byte(req)); err != nil {
			return err
		}
		line, err := r.ReadString('\n')
		if err == nil && strings.HasPrefix(line, "$") && line != "$-1\r\n" {
			_, err = r.Discard(len(l.value) + 2)
		}
		if err != nil {
			return err
		}
		d := time.Since(start)
		l.mu.Lock()
		l.lat = append(l.lat, d)
		l.mu.Unlock()
		if l.pace > 0 {
			time.Sleep(l.pace) // pacing the load, not waiting for a condition
		}
	}
	return nil
}

// phaseFigures are the requests served in a phase: how many a second,
// and their latency.
type phaseFigures struct {
	rps           float64
	p50, p99, max time.Duration
}

// phase runs run and logs the requests served meanwhile: how many a
// second, and their latency.
func (l *latencyLoad) phase(name string, run func()) phaseFigures {
	l.mu.Lock()
	l.lat = l.lat[:0]
	l.mu.Unlock()
	start := time.Now()
	run()
	elapsed := time.Since(start)
	l.mu.Lock()
	ls := slices.Clone(l.lat)
	l.mu.Unlock()
	if len(ls) == 0 {
		l.t.Errorf("%s: no request was served", name)
		return phaseFigures{}
	}
	slices.Sort(ls)
	q := func(f float64) time.Duration { return ls[min(len(ls)-1, int(f*float64(len(ls))))] }
	f := phaseFigures{rps: float64(len(ls)) / elapsed.Seconds(), p50: q(0.5), p99: q(0.99), max: ls[len(ls)-1]}
	l.t.Logf("%-34s %6.1f s: %7.0f requests/s, latency p50 %v, p99 %v, max %v", name, elapsed.Seconds(), f.rps,
		f.p50.Round(time.Microsecond), f.p99.Round(time.Microsecond), f.max.Round(time.Microsecond))
	return f
}

func (l *latencyLoad) stop() {
	l.done.Store(true)
	l.wg.Wait()
}

func waitMovedLong(t testing.TB, s *Server) {
	deadline := time.Now().Add(5 * time.Minute)
	for moveOf(s.testPool("p").place.Load()) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the move did not end")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
