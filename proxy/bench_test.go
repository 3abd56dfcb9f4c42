package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// The comparison benchmark runs only when KOLCO_PROXY_BENCH=1 (about 40 s):
//
//	KOLCO_PROXY_BENCH=1 go test -run TestProxyComparison -v ./proxy/
//
// It starts two memcached servers, nutcracker in front of them, and the
// proxy in a child process (this test binary re-executed) with GOMAXPROCS
// 1 and 2, then drives each with the same closed-loop load on 127.0.0.1:
// get, set and a 10-key multi-get of 100-byte values, one request at a
// time per client, and gets pipelined eight at a time, as clients that
// batch send them. Figures are reported as ratios to nutcracker; "direct"
// is one memcached without a proxy.
const benchEnv = "KOLCO_PROXY_BENCH"

// helperEnv makes the test binary run a proxy for the benchmark.
const helperEnv = "KOLCO_PROXY_HELPER_CONFIG"

// TestHelperProxyProcess is the child process of the benchmark; it does
// nothing in a normal test run.
func TestHelperProxyProcess(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("helper process for TestProxyComparison")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	go func() { // the parent closes stdin to stop us
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	if err := s.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
}

type benchResult struct {
	ops      int
	elapsed  time.Duration
	p50, p99 time.Duration
}

func (r benchResult) rate() float64 { return float64(r.ops) / r.elapsed.Seconds() }

// drive runs conns closed-loop clients for d (or 2,000,000 requests) and
// measures throughput and latency. Each client writes depth requests at
// once and reads their replies; a request's latency runs from that write
// to its reply.
func drive(t *testing.T, addr string, conns int, d time.Duration, req string, cmd memcache.Command, depth int) benchResult {
	var wg sync.WaitGroup
	lat := make([][]time.Duration, conns)
	start := time.Now()
	stopAt := start.Add(d)
	for i := range conns {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			rr := memcache.NewReplyReader(bufio.NewReader(conn), 0)
			w := []byte(strings.Repeat(req, depth))
			var buf []byte
			for n := 0; n < 2_000_000/conns; n += depth {
				t0 := time.Now()
				if t0.After(stopAt) {
					return
				}
				if _, err := conn.Write(w); err != nil {
					t.Error(err)
					return
				}
				for range depth {
					var err error
					if buf, _, err = rr.Read(buf[:0], cmd, nil); err != nil || memcache.IsErrorReply(buf) {
						t.Errorf("%s: %v %q", addr, err, buf)
						return
					}
					lat[i] = append(lat[i], time.Since(t0))
				}
			}
		}()
	}
	wg.Wait()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	if len(all) == 0 {
		t.Fatal("no requests completed")
	}
	return benchResult{ops: len(all), elapsed: time.Since(start),
		p50: all[len(all)/2], p99: all[len(all)*99/100]}
}

func TestProxyComparison(t *testing.T) {
	if os.Getenv(benchEnv) != "1" {
		t.Skipf("set %s=1 to run the proxy comparison (about 40 s)", benchEnv)
	}
	needBinary(t, "nutcracker")
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	servers := fmt.Sprintf("  servers:\n   - %s:1\n   - %s:1\n", ms[0].addr, ms[1].addr)
	ncAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startNutcracker(t, "p:\n  listen: "+ncAddr+"\n"+servers, ncAddr)
	targets := []struct{ name, addr string }{{"direct", ms[0].addr}, {"nutcracker", ncAddr}}
	for _, procs := range []int{1, 2} {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		startProxyProcess(t, "p:\n  listen: "+addr+"\n"+servers, addr, procs)
		targets = append(targets, struct{ name, addr string }{fmt.Sprintf("kolco GOMAXPROCS=%d", procs), addr})
	}
	val := strings.Repeat("v", 100)
	var keys []string
	for i := range 10 {
		keys = append(keys, fmt.Sprint("bench:", i))
	}
	for _, tg := range targets {
		c := dial(t, tg.addr)
		for _, k := range keys {
			c.do(fmt.Sprintf("set %s 0 0 100\r\n%s\r\n", k, val))
		}
	}
	loads := []struct {
		name  string
		req   string
		cmd   memcache.Command
		depth int
	}{
		{"get", "get bench:3\r\n", memcache.CmdGet, 1},
		{"set", "set bench:4 0 0 100\r\n" + val + "\r\n", memcache.CmdSet, 1},
		{"get 10 keys", "get " + strings.Join(keys, " ") + "\r\n", memcache.CmdGet, 1},
		{"get x8 pipe", "get bench:3\r\n", memcache.CmdGet, 8},
	}
	var report strings.Builder
	fmt.Fprintf(&report, "\n%-12s %-20s %12s %10s %10s %8s %8s %8s\n", "load", "target", "ops/s", "p50", "p99", "x ops", "x p50", "x p99")
	for _, l := range loads {
		// Rounds interleave the targets so that a burst of other load on
		// the machine does not land on one target only; the median round
		// (by throughput) of each target is reported.
		rounds := map[string][]benchResult{}
		for range 5 {
			for _, tg := range targets {
				rounds[tg.name] = append(rounds[tg.name], drive(t, tg.addr, 16, 500*time.Millisecond, l.req, l.cmd, l.depth))
			}
		}
		results := map[string]benchResult{}
		for name, rs := range rounds {
			slices.SortFunc(rs, func(a, b benchResult) int { return int(a.rate() - b.rate()) })
			results[name] = rs[len(rs)/2]
		}
		nc := results["nutcracker"]
		for _, tg := range targets {
			r := results[tg.name]
			fmt.Fprintf(&report, "%-12s %-20s %12.0f %10v %10v %8.2f %8.2f %8.2f\n", l.name, tg.name, r.rate(),
				r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond),
				r.rate()/nc.rate(), float64(r.p50)/float64(nc.p50), float64(r.p99)/float64(nc.p99))
		}
	}
	t.Log(report.String())
}

// startProxyProcess runs the proxy in a child process with GOMAXPROCS=procs.
func startProxyProcess(t *testing.T, yaml, addr string, procs int) {
	path := filepath.Join(t.TempDir(), "kolco.yml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProxyProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path, fmt.Sprint("GOMAXPROCS=", procs))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	waitListening(t, addr)
}
