package proxy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/sim/trace"
	"github.com/kolco-dev/kolco/sim/workload"
)

// TestTrafficChangePredictedMeasured: a Zipf workload through the proxy
// in front of ten real memcached servers, cache-aside (a read that misses
// is set), at a steady rate; then an eleventh server is added, cold. The
// pool predicts the change from its traffic sample when it applies it, and
// measures the same figures over the window after: the share of requests
// whose key moves, the misses the change adds (reads of moved keys that
// were cached), the busiest server's requests per second, and the keys
// and bytes that move (the trace's over its key share, against the keys
// the servers' metadumps list at the change). Each prediction must come
// within 10% of what was measured. The trace holds every request since
// the servers started empty, so that the keys it shows are the keys the
// servers hold: a trace that covers less of the key space predicts fewer.
//
// The pool predicts at the rate the trace shows, and a busy machine does
// not hold the offered rate: the window's rate may differ by more than
// the tolerance. So the figures that scale with the rate are compared at
// the rate that came: the busiest server's share of the requests, and the
// misses the model predicts for as many reads as the window had (the
// trace's reads before the change replanned with the window scaled by
// the rates' ratio). The pool's own figures are logged beside them.
//
// The misses added are a count of some 150 keys here, whose chance spread
// is about its square root, 8%: 10% is within two of those, not three. So
// that chance alone fails the test about once in a thousand runs, not
// once in twenty, the misses may differ by three times the square root of
// the count where that is more than 10%. KOLCO_TRAFFIC_LONG=1 runs a
// 60 s trace and a 30 s window over 50 000 keys, some 1 150, 820 and 350
// misses added at Zipf 0.9, 1.0 and 1.2 where the offered rate holds
// (spreads of 3%, 3.5% and 5.3%); KOLCO_TRAFFIC_LONG=120, a 120 s trace
// and a 60 s window, some 2 050, 1 480 and 620 (2.2%, 2.6% and 4%).
//
// The shares (of the reads whose key moves, of the requests the busiest
// server gets) are counts too, predicted over the trace's reads and
// measured over the window's, each read a draw of its own: the chance
// spread of their difference is sqrt(p(1-p)(1/trace reads + 1/window
// reads)), 0.004 for a share of 0.1 at the offered rate, where 10% is the
// tighter bound. A busy machine does not hold that rate: at load 44-75 on
// two cores the windows had 418 and 1409 reads (their traces some 1670
// and 2350), spreads of 0.020 and 0.010, and the busiest server's share
// measured 0.1657 against 0.1471 predicted, the reads of moved keys
// 0.0937 against 0.1076 - within two spreads, not within 10%. So a share
// may differ by three of its spreads where that is more than 10%. (The
// busiest server's requests include the sets that follow its reads'
// misses: counted as draws of their own they would narrow the spread,
// which the reads do not.)
//
// Applied warm, the change adds no misses by the plan (a read that misses
// at a key's new server is answered by its old one), and none may be
// measured beyond the same chance spread.
//
// KOLCO_TRAFFIC_LONG runs a longer trace and window, and
// KOLCO_TRAFFIC_ZIPF the workload at another exponent than 1.0 (the
// acceptance figures in docs/trace.md run 0.9 and 1.2 besides).
func TestTrafficChangePredictedMeasured(t *testing.T) {
	t.Parallel()
	// The long runs take their turns: each is the machine's load enough
	// on two cores, and the misses they count grow with the reads their
	// windows get.
	long := os.Getenv("KOLCO_TRAFFIC_LONG") != ""
	for _, warm := range []bool{false, true} {
		t.Run(map[bool]string{false: "cold", true: "warm"}[warm], func(t *testing.T) {
			if !long {
				t.Parallel() // measured against the window's own read rate, whatever the machine gives
			}
			changePredictedMeasured(t, warm)
		})
	}
}

func changePredictedMeasured(t *testing.T, warm bool) {
	const rate = 2000.0 // requests per second
	keys := 5000
	s := 1.0
	if v := os.Getenv("KOLCO_TRAFFIC_ZIPF"); v != "" {
		var err error
		if s, err = strconv.ParseFloat(v, 64); err != nil || s <= 0 {
			t.Fatalf("KOLCO_TRAFFIC_ZIPF=%q: want a positive exponent", v)
		}
	}
	// The window holds the pool's listing of the servers' keys too
	// (pool_traffic_moved.go), which must end within it: ten servers
	// dialed and their crawlers woken one after another, each turn a wait
	// for a core that a busy machine stretches, so the window scales with
	// the load as the clients' patience does: on a machine that stalled,
	// a window of 5 s ended during the listing's dial ("i/o timeout"), and
	// the keys that move were not measured.
	traced, window := 10*time.Second, time.Duration(float64(5*time.Second)*realprog.Busy()).Round(time.Millisecond)
	if v := os.Getenv("KOLCO_TRAFFIC_LONG"); v != "" {
		secs, err := strconv.Atoi(v)
		switch {
		case v == "1":
			secs = 60
		case err != nil || secs < 10:
			t.Fatalf("KOLCO_TRAFFIC_LONG=%q: want 1 or the trace's seconds, 10 or more", v)
		}
		traced, window, keys = time.Duration(secs)*time.Second, time.Duration(secs)*time.Second/2, 50000
	}
	c := startCluster(t, 11)
	settings := fmt.Sprintf("  distribution: ring\n  warm: {enabled: %v}\n  traffic: {enabled: true, requests: 1048576, window: %d}\n", warm, window.Milliseconds())
	srv := startProxy(t, "kolco:\n  admin_listen: \":0\"\n"+c.yaml(settings, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9))
	load := startZipfLoad(t, srv.Addr("p").String(), keys, s, rate, traced+window+window/2)
	time.Sleep(traced) // the load runs: the trace before the change
	before := srv.testPool("p").place.Load().configured()
	reload(t, srv, "kolco:\n  admin_listen: \":0\"\n"+c.yaml(settings, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10))
	var ch *TrafficChange
	for deadline := time.Now().Add(window + time.Minute); ch == nil; time.Sleep(50 * time.Millisecond) { // the window, then as eventually waits
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the change's window to close")
		}
		var st PoolStatus
		adminGet(t, srv, "/v1/pools/p", "", &st)
		if st.Traffic != nil && st.Traffic.Change != nil && st.Traffic.Change.Done && st.Traffic.Change.Predicted != nil {
			ch = st.Traffic.Change
		}
	}
	load.stop(t)
	p, m := ch.Predicted, ch.Measured
	t.Logf("Zipf %g: change %d -> %d servers, window %v, at %.0f requests/s offered (%d sent, %d failed)", s, ch.ServersBefore, ch.ServersAfter, ch.Window, rate, load.sent, load.failed)
	t.Logf("reads of moved keys: predicted %.2f%%, measured %.2f%%", 100*p.MovedReads, 100*m.MovedReads)
	t.Logf("misses added: predicted %.0f, measured %.0f; reads %.0f / %.0f; misses in all %.0f / %.0f", p.AddedMisses, m.AddedMisses, p.Reads, m.Reads, p.Misses, m.Misses)
	t.Logf("busiest server: predicted %s at %.0f req/s, measured %s at %.0f req/s (means %.0f / %.0f)", p.PeakServer, p.PeakRPS, m.PeakServer, m.PeakRPS, p.MeanRPS, m.MeanRPS)
	t.Logf("keys and bytes that move: predicted %.0f keys, %.0f bytes; measured %.0f keys, %.0f bytes%s; copied by a warm change: %.0f",
		p.MovedKeys, p.MovedBytes, m.MovedKeys, m.MovedBytes, note(m.MovedNote), m.CopiedKeys)
	ratio := m.Reads / p.Reads // the window's rate over the trace's
	atRate := replanAtRate(t, srv, before, ch, ratio)
	t.Logf("the window's read rate was %.3f times the trace's; at that rate the model predicts %.0f misses added", ratio, atRate.AddedMisses)
	n := float64(ch.ServersAfter)
	peak := m.PeakRPS / (n * m.MeanRPS)
	traceReads := p.Reads * traced.Seconds() / window.Seconds() // the reads the prediction was made from
	for _, f := range []struct {
		what              string
		predicted, actual float64
		spread            float64 // the measure's chance spread
	}{
		{"reads of moved keys", p.MovedReads, m.MovedReads, shareSpread(m.MovedReads, traceReads, m.Reads)},
		{"misses added at the window's rate", atRate.AddedMisses, m.AddedMisses, math.Sqrt(m.AddedMisses)},
		{"busiest server's share of the requests", p.PeakRPS / (n * p.MeanRPS), peak, shareSpread(peak, traceReads, m.Reads)},
		{"keys that move", p.MovedKeys, m.MovedKeys, 0},
		{"bytes that move", p.MovedBytes, m.MovedBytes, 0},
	} {
		if tol := max(0.10*f.actual, 3*f.spread); math.Abs(f.predicted-f.actual) > tol {
			t.Errorf("%s: predicted %.4g, measured %.4g: off by more than %.3g", f.what, f.predicted, f.actual, tol)
		}
	}
	page := httpBody(t, "http://"+srv.AdminAddr().String()+"/status")
	if !strings.Contains(page, `<table class="change" data-done="true">`) {
		t.Error("the status page shows no change predicted and measured")
	}
	metrics := httpBody(t, "http://"+srv.AdminAddr().String()+"/metrics")
	if want := `kolco_proxy_change_cost{kind="added_misses",pool="p",source="measured"} ` + strconv.FormatFloat(m.AddedMisses, 'g', -1, 64); !strings.Contains(metrics, want) {
		t.Errorf("the metrics lack %q", want)
	}
	if code := adminGet(t, srv, "/v1/pools/p/trace", "", nil); code != http.StatusOK {
		t.Errorf("the trace: %d", code)
	}
}

// replanAtRate predicts the change again from the pool's trace before it,
// with the window scaled by ratio: as many requests in it as came.
func replanAtRate(t *testing.T, srv *Server, before *placement, ch *TrafficChange, ratio float64) *ChangeFigures {
	p := srv.testPool("p")
	after := p.place.Load().configured()
	var reqs []trace.Request
	for _, r := range p.traffic.requests() {
		if r.Time < ch.At.UnixNano() {
			reqs = append(reqs, r)
		}
	}
	f, err := predictChange(reqs, before, after, time.Duration(float64(ch.Window)*ratio), 1, ch.Warm)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// zipfLoad is a cache-aside Zipf workload at a steady rate: clients read
// keys by a Zipf law, and set each key a read missed.
type zipfLoad struct {
	wg           sync.WaitGroup
	done         chan struct{}
	sent, failed int64
	mu           sync.Mutex
	first, err   error // the first failure and the last
}

// startZipfLoad runs the load against addr for at most d, or until stop.
func startZipfLoad(t *testing.T, addr string, keys int, s, rate float64, d time.Duration) *zipfLoad {
	const clients = 8
	l := &zipfLoad{done: make(chan struct{})}
	t.Cleanup(func() { l.stop(t) })
	start := time.Now()
	interval := time.Duration(float64(time.Second) * clients / rate)
	for i := range clients {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			kv, err := dialPatiently(addr)
			if err != nil {
				l.fail(err)
				return
			}
			defer func() { kv.close() }()
			draw := zipfDraw(i, keys, s, int(rate*d.Seconds()/clients)+1)
			val := strings.Repeat("v", 100)
			next := start.Add(time.Duration(i) * interval / clients)
			for n := 0; time.Since(start) < d; n++ {
				select {
				case <-l.done:
					return
				default:
				}
				if wait := time.Until(next); wait > 0 {
					time.Sleep(wait) // pacing the load, not waiting for a condition
				}
				next = next.Add(interval)
				key := "key:" + strconv.FormatUint(draw(), 10)
				_, ok, err := kv.get(key)
				if err == nil && !ok {
					err = kv.set(key, val)
				}
				l.count(err)
				if err != nil {
					// The connection's replies may be out of step with its
					// requests now (a reply that came after the deadline):
					// a client starts again on a new one.
					kv.close()
					if kv, err = dialPatiently(addr); err != nil {
						l.fail(err)
						return
					}
				}
			}
		}()
	}
	return l
}

// dialPatiently dials the proxy at addr, again after a failed dial, until
// a client's patience runs out: dialKV gives a connect 2 s, which a
// machine that stalls for longer runs out, and a client whose dial failed
// would quit the load; a proxy that never accepts still fails it.
func dialPatiently(addr string) (kvConn, error) {
	deadline := time.Now().Add(kvPatience())
	for {
		kv, err := dialKV("memcached", addr)
		if err == nil || time.Now().After(deadline) {
			return kv, err
		}
		time.Sleep(50 * time.Millisecond) // a refused dial fails at once: not a spin
	}
}

// zipfDraw returns client i's draws of key ranks by a Zipf law of
// exponent s over keys keys: math/rand's for s >= 1 (as the figures in
// docs/operations.md were drawn), else a seeded stream of n ranks
// (sim/workload), taken again from its start once used up.
func zipfDraw(i, keys int, s float64, n int) func() uint64 {
	if s >= 1 {
		z := rand.NewZipf(rand.New(rand.NewPCG(uint64(i), 37)), s+1e-9, 1, uint64(keys-1))
		return z.Uint64
	}
	ranks, next := workload.Stream(workload.ZipfWeights(keys, s), n, uint64(i)), 0
	return func() uint64 {
		r := ranks[next%len(ranks)]
		next++
		return uint64(r)
	}
}

func (l *zipfLoad) count(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent++
	if err != nil {
		l.failed++
		l.err = err
		if l.first == nil {
			l.first = err
		}
	}
}

func (l *zipfLoad) fail(err error) { l.count(err) }

// stop ends the load and waits for its clients; it fails t if a request
// failed.
func (l *zipfLoad) stop(t *testing.T) {
	select {
	case <-l.done:
	default:
		close(l.done)
	}
	l.wg.Wait()
	if l.err == nil {
		return
	}
	// A machine at a load of 30 on two cores times out a few requests (the
	// client's deadline of 5 s, or the pool's to its server): up to one in
	// a thousand is logged, since the figures are the proxy's count of
	// what came, and more fail the test.
	say := t.Errorf
	if l.failed*1000 <= l.sent {
		say = t.Logf
	}
	say("%d of %d requests failed, the first: %v; the last: %v", l.failed, l.sent, l.first, l.err)
	l.err = nil
}

// note returns a figure's note in parentheses, or nothing.
func note(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// shareSpread is the chance spread of the difference between two shares
// of draws from the same distribution, one over n1 draws and one over n2,
// near p: the binomials' standard deviations added in quadrature,
// sqrt(p(1-p)(1/n1+1/n2)).
func shareSpread(p, n1, n2 float64) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 0
	}
	return math.Sqrt(p * (1 - p) * (1/n1 + 1/n2))
}
