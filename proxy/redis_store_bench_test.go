package proxy

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// BenchmarkStoreMove measures a store's move beside the loop an operator
// would write, in one run: first the bare loop (SCAN, then MIGRATE ...
// KEYS of what it listed, one after the other on one connection, no
// proxy) between two redis-servers of their own, at batches of 100 and
// 1000, moving as many keys as the store's move does; then 200,000 keys
// of 100 bytes through a store of 4 redis-servers with eight closed-loop
// clients of GET and SET (one in four) through kolco, steady for 10 s
// (the span the default bound is measured over), then while a fifth
// server is added and the keys that change owner move, at the default
// pacing; then steady again and while the fifth is removed. It logs the
// keys a second of each (the store's per pair of servers: four sources
// and one target, or one source and four targets), the clients' p99
// steady and during each move, and eta and to_move at 25, 50 and 75% of
// the keys moved beside what happened; KOLCO_BENCH_STORE adds to the
// store's settings (", latency_bound: 100000").
//
//	go test -run '^$' -bench StoreMove -benchtime 1x -timeout 15m ./proxy
func BenchmarkStoreMove(b *testing.B) {
	for range b.N {
		storeMoveOnce(b)
	}
}

func storeMoveOnce(b *testing.B) {
	const nkeys, sources = 200_000, 4
	value := strings.Repeat("v", 100)
	// About a fifth of the keys move: the bare loop moves as many.
	pairKeys := nkeys / 5
	bare := 0.0
	for _, batch := range []int{100, 1000} {
		from, to := startRedis(b, 0), startRedis(b, 0)
		pipeline(b, dialRedis(b, from.addr), pairKeys, func(i int) []string { return []string{"SET", "key:" + strconv.Itoa(i), value} })
		start := time.Now()
		bareMigrateLoop(b, from.addr, to.addr, batch)
		rate := float64(pairKeys) / time.Since(start).Seconds()
		b.Logf("bare SCAN + MIGRATE ... KEYS loop, batch %d: %.0f keys/s", batch, rate)
		bare = max(bare, rate)
	}
	rs := []*redisServer{startRedis(b, 0), startRedis(b, 0), startRedis(b, 0), startRedis(b, 0), startRedis(b, 0)}
	yaml := func(servers []*redisServer) string {
		return "kolco:\n  admin_listen: 127.0.0.1:0\n" + redisPoolYAML("  distribution: ring\n  timeout: 10000\n  store: {enabled: true"+os.Getenv("KOLCO_BENCH_STORE")+"}\n", servers...)
	}
	s := startProxy(b, yaml(rs[:sources]))
	addr := s.Addr("p").String()
	pipeline(b, dialRedis(b, addr), nkeys, func(i int) []string { return []string{"SET", fmt.Sprintf("key:%d", i), value} })
	l := startLatencyLoad(b, addr, 8, nkeys, value, 0)
	defer l.stop()
	for _, c := range []struct {
		name    string
		servers []*redisServer
		pairs   int // sources times targets
	}{
		{"4 -> 5 servers", rs, sources},
		{"5 -> 4 servers", rs[:sources], sources},
	} {
		steady := l.phase("steady", func() { time.Sleep(10 * time.Second) })
		var w *moveWatch
		var reloaded time.Time
		prof := startServerProfile(b, rs)
		during := l.phase(c.name+", keys moving", func() {
			reloaded = time.Now()
			reload(b, s, yaml(c.servers))
			w = watchMove(s.testPool("p"))
			waitMovedLong(b, s)
			w.stop()
		})
		last := s.testPool("p").mover.(*storeMover).last()
		moved := w.m.stats.moved.Load() + w.m.stats.onRequest.Load()
		took := last.Ended.Sub(time.Unix(0, w.m.stats.opened.Load())).Seconds()
		pair := float64(moved) / took / float64(c.pairs)
		b.Logf("%s: moved %d keys in %.2f s: %.0f keys/s, %.0f a pair of servers (%.2f of the bare loop's %.0f); p99 %v steady, %v moving (%.2fx; the mover's bound %.1f ms, its peak interval %.1f ms, slowed %d times); requests/s %.2f of steady",
			c.name, moved, took, float64(moved)/took, pair, pair/bare, bare, steady.p99.Round(time.Microsecond), during.p99.Round(time.Microsecond),
			float64(during.p99)/float64(steady.p99), last.LatencyBoundMs, last.PeakP99Ms, last.Slowed, during.rps/steady.rps)
		// Requests for moving keys wait until the move opens (see
		// storeMove): that wait is in the clients' p99 while keys move,
		// not in the mover's keys a second.
		b.Logf("%s: %d keys moved by requests' own MIGRATEs, %d by the mover", c.name, w.m.stats.onRequest.Load(), w.m.stats.moved.Load())
		b.Logf("%s: the move opened %v after the reload", c.name, time.Unix(0, w.m.stats.opened.Load()).Sub(reloaded).Round(time.Millisecond))
		w.report(b, c.name, moved, last.Ended)
		prof.report(b, c.name)
		if c.pairs == sources && c.servers[len(c.servers)-1] == rs[4] {
			b.ReportMetric(bare, "bare-keys/s")
			b.ReportMetric(pair, "pair-keys/s")
			b.ReportMetric(pair/bare, "pair/bare")
			b.ReportMetric(float64(steady.p99.Microseconds())/1000, "p99-steady-ms")
			b.ReportMetric(float64(during.p99.Microseconds())/1000, "p99-moving-ms")
		}
	}
}

// moveWatch samples a move's status every 20 ms, to set its estimates
// beside what happened.
type moveWatch struct {
	m       *storeMove
	p       *pool
	done    chan struct{}
	stopped chan struct{}
	samples []moveSample
}

type moveSample struct {
	at           time.Time
	moved        int64
	toMove       int64
	eta          float64
	openedBefore bool
	servers      []MoveServer // the mover's progress through each old server
}

func watchMove(p *pool) *moveWatch {
	w := &moveWatch{m: moveOf(p.place.Load()), p: p, done: make(chan struct{}), stopped: make(chan struct{})}
	go func() {
		defer close(w.stopped)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-t.C:
			}
			if ms := p.mover.(*storeMover).current(); ms != nil && ms.State == "moving" {
				w.samples = append(w.samples, moveSample{at: time.Now(), moved: ms.Moved + ms.MovedByRequests, toMove: ms.ToMove, eta: ms.ETA, servers: ms.Servers})
			}
		}
	}()
	return w
}

func (w *moveWatch) stop() {
	close(w.done)
	<-w.stopped
}

// report logs, at a quarter, half and three quarters of the keys moved,
// the eta and to_move the status gave beside the time that was left and
// the keys that moved in all.
func (w *moveWatch) report(b *testing.B, name string, total int64, ended time.Time) {
	line := name + ": "
	for _, f := range []float64{0.25, 0.5, 0.75} {
		i := slices.IndexFunc(w.samples, func(s moveSample) bool { return float64(s.moved) >= f*float64(total) })
		if i < 0 {
			line += fmt.Sprintf("at %.0f%% no sample; ", 100*f)
			continue
		}
		s := w.samples[i]
		left := ended.Sub(s.at).Seconds()
		line += fmt.Sprintf("at %.0f%% moved eta %.2f s for %.2f s left (%+.0f%%), to_move %d for %d (%+.0f%%); ", 100*f, s.eta, left,
			100*(s.eta/left-1), s.toMove, total, 100*(float64(s.toMove)/float64(total)-1))
	}
	b.Log(line)
}

// bareMigrateLoop moves every key of from to to with SCAN and MIGRATE
// ... KEYS, batch keys at a time, one after the other on one connection.
func bareMigrateLoop(b *testing.B, from, to string, batch int) {
	c := dialRedis(b, from)
	host, port, _ := strings.Cut(to, ":")
	cursor := "0"
	for {
		reply := c.do("SCAN", cursor, "COUNT", strconv.Itoa(batch))
		next, keys, err := redis.ParseScan([]byte(reply))
		if err != nil {
			b.Fatal(err)
		}
		if len(keys) > 0 {
			args := []string{"MIGRATE", host, port, "", "0", "5000", "REPLACE", "KEYS"}
			for _, k := range keys {
				args = append(args, string(k))
			}
			if r := c.do(args...); redis.IsError([]byte(r)) {
				b.Fatal(r)
			}
		}
		if cursor = string(next); cursor == "0" {
			return
		}
	}
}

// serverProfile is where the servers' time went while a move ran: each
// one's CPU time and its commands' own (INFO cpu and commandstats, the
// latter reset at the start).
type serverProfile struct {
	rs    []*redisServer
	start time.Time
	cpu   []float64
}

func startServerProfile(b *testing.B, rs []*redisServer) *serverProfile {
	sp := &serverProfile{rs: rs, start: time.Now()}
	for _, r := range rs {
		c := dialRedis(b, r.addr)
		c.do("CONFIG", "RESETSTAT")
		sp.cpu = append(sp.cpu, infoCPU(c.do("INFO", "cpu")))
	}
	return sp
}

// report logs, for each server, its share of a core busy since the
// start and the three commands that took the most of it.
func (sp *serverProfile) report(b *testing.B, name string) {
	wall := time.Since(sp.start).Seconds()
	line := name + ", the servers' time (CPU busy; commands by their own time):"
	for i, r := range sp.rs {
		c := dialRedis(b, r.addr)
		busy := (infoCPU(c.do("INFO", "cpu")) - sp.cpu[i]) / wall
		type stat struct {
			cmd       string
			calls     int64
			usec, per float64
		}
		var stats []stat
		for _, l := range strings.Split(c.do("INFO", "commandstats"), "\r\n") {
			cmd, rest, ok := strings.Cut(strings.TrimPrefix(l, "cmdstat_"), ":")
			if !ok || !strings.HasPrefix(l, "cmdstat_") {
				continue
			}
			var st stat
			st.cmd = cmd
			for _, f := range strings.Split(rest, ",") {
				k, v, _ := strings.Cut(f, "=")
				switch k {
				case "calls":
					st.calls, _ = strconv.ParseInt(v, 10, 64)
				case "usec":
					st.usec, _ = strconv.ParseFloat(v, 64)
				case "usec_per_call":
					st.per, _ = strconv.ParseFloat(v, 64)
				}
			}
			stats = append(stats, st)
		}
		slices.SortFunc(stats, func(a, b stat) int { return int(b.usec - a.usec) })
		line += fmt.Sprintf("\n  %s: %.0f%% busy;", r.addr, 100*busy)
		for _, st := range stats[:min(3, len(stats))] {
			line += fmt.Sprintf(" %s %d calls, %.0f ms (%.0f%%), %.1f µs each;", st.cmd, st.calls, st.usec/1000, st.usec/1e4/wall, st.per)
		}
	}
	b.Log(line)
}

// infoCPU returns the seconds of CPU an INFO cpu reply says the server
// used.
func infoCPU(reply string) float64 {
	total := 0.0
	for _, l := range strings.Split(reply, "\r\n") {
		k, v, _ := strings.Cut(l, ":")
		if k == "used_cpu_sys" || k == "used_cpu_user" {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return total
}
