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
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/testproc"
	"github.com/kolco-dev/kolco/proxy/memcache"
)

// The comparison benchmark runs only when KOLCO_PROXY_BENCH=1 (about 40 s):
//
//	KOLCO_PROXY_BENCH=1 go test -run TestProxyComparison -v ./proxy/
//
// It starts two memcached servers, nutcracker in front of them, and the
// proxy in a child process (this test binary re-executed) with GOMAXPROCS
// set to 1 and to the core count, and at its default (GOMAXPROCS unset,
// threads adapted to the load as kolco proxy does), then drives each with
// the same closed-loop load on 127.0.0.1:
// get, set and a 10-key multi-get of 100-byte values, one request at a
// time per client, and gets pipelined eight at a time, as clients that
// batch send them. Figures are medians of interleaved rounds (five, or
// KOLCO_PROXY_BENCH_ROUNDS), reported as ratios to nutcracker: throughput,
// latency, and CPU time per request of each process (from
// /proc/PID/task/*/schedstat); "direct" is one memcached without a proxy.
// KOLCO_PROXY_BENCH_BASELINE=path adds another build's proxy test binary
// (go test -c) as a target, for an A/B comparison in one run.
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
	go AdaptThreads(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))) // as kolco proxy does
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
	cpu      time.Duration // the target process's CPU time, when known
}

func (r benchResult) rate() float64 { return float64(r.ops) / r.elapsed.Seconds() }

// cpuPerOp returns the target's CPU time per request, or 0 when unknown.
func (r benchResult) cpuPerOp() time.Duration { return r.cpu / time.Duration(max(r.ops, 1)) }

// cpuTime returns the CPU time process pid has used, summed over its
// threads, from /proc/PID/task/*/schedstat (nanoseconds on the CPU), which
// is exact where /proc/PID/stat counts in 10 ms ticks.
func cpuTime(t *testing.T, pid int) time.Duration {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		t.Fatalf("no schedstat for pid %d: %v", pid, err)
	}
	var total time.Duration
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue // a thread that ended
		}
		var ns int64
		if _, err := fmt.Sscan(string(b), &ns); err == nil {
			total += time.Duration(ns)
		}
	}
	return total
}

// drive runs conns closed-loop clients for d (or 2,000,000 requests) and
// measures throughput and latency, and the CPU time of process pid (when
// not 0). Each client writes depth requests at once and reads their
// replies; a request's latency runs from that write to its reply.
func drive(t *testing.T, addr string, pid, conns int, d time.Duration, req string, cmd memcache.Command, depth int) benchResult {
	return driveDial(t, func() (net.Conn, error) { return net.Dial("tcp", addr) }, addr, pid, conns, d, req, cmd, depth)
}

// driveDial is drive over connections dial opens.
func driveDial(t *testing.T, dial func() (net.Conn, error), addr string, pid, conns int, d time.Duration, req string, cmd memcache.Command, depth int) benchResult {
	var wg sync.WaitGroup
	lat := make([][]time.Duration, conns)
	var cpu0 time.Duration
	if pid != 0 {
		cpu0 = cpuTime(t, pid)
	}
	start := time.Now()
	stopAt := start.Add(d)
	for i := range conns {
		conn, err := dial()
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
	res := benchResult{elapsed: time.Since(start)}
	if pid != 0 {
		res.cpu = cpuTime(t, pid) - cpu0
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	if len(all) == 0 {
		t.Fatal("no requests completed")
	}
	res.ops, res.p50, res.p99 = len(all), all[len(all)/2], all[len(all)*99/100]
	return res
}

// benchTarget is a process the comparison drives.
type benchTarget struct {
	name, addr string
	pid        int
}

// median returns the median of rs by f.
func median(rs []benchResult, f func(benchResult) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

func TestProxyComparison(t *testing.T) {
	if os.Getenv(benchEnv) != "1" {
		t.Skipf("set %s=1 to run the proxy comparison (about 40 s)", benchEnv)
	}
	needBinary(t, "nutcracker")
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	servers := fmt.Sprintf("  servers:\n   - %s:1\n   - %s:1\n", ms[0].addr, ms[1].addr)
	ncAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	ncPid := startNutcracker(t, "p:\n  listen: "+ncAddr+"\n"+servers, ncAddr)
	targets := []benchTarget{{"direct", ms[0].addr, ms[0].cmd.Process.Pid}, {"nutcracker", ncAddr, ncPid}}
	if base := os.Getenv(benchEnv + "_BASELINE"); base != "" {
		// Another build's proxy test binary, for an A/B comparison.
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		pid := startProxyProcess(t, base, "p:\n  listen: "+addr+"\n"+servers, addr, 0)
		targets = append(targets, benchTarget{"baseline default", addr, pid})
	}
	for _, procs := range []int{1, runtime.NumCPU(), 0} {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		pid := startProxyProcess(t, os.Args[0], "p:\n  listen: "+addr+"\n"+servers, addr, procs)
		name := fmt.Sprintf("kolco GOMAXPROCS=%d", procs)
		if procs == 0 {
			name = "kolco default"
		}
		targets = append(targets, benchTarget{name, addr, pid})
	}
	rounds := 5
	if n, err := strconv.Atoi(os.Getenv(benchEnv + "_ROUNDS")); err == nil && n >= 5 {
		rounds = n
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
	fmt.Fprintf(&report, "\n%d interleaved rounds of 500 ms, 16 clients; medians; x = ratio to nutcracker\n", rounds)
	fmt.Fprintf(&report, "%-12s %-22s %10s %9s %9s %9s %7s %7s %7s %7s\n", "load", "target", "ops/s", "p50", "p99", "cpu/op", "x ops", "x p50", "x p99", "x cpu")
	for _, l := range loads {
		// Rounds interleave the targets so that a burst of other load on
		// the machine does not land on one target only; each figure is
		// the median of its rounds.
		byTarget := map[string][]benchResult{}
		for range rounds {
			for _, tg := range targets {
				byTarget[tg.name] = append(byTarget[tg.name], drive(t, tg.addr, tg.pid, 16, 500*time.Millisecond, l.req, l.cmd, l.depth))
			}
		}
		type fig struct{ ops, p50, p99, cpu float64 }
		figs := map[string]fig{}
		for name, rs := range byTarget {
			figs[name] = fig{median(rs, benchResult.rate), median(rs, func(r benchResult) float64 { return float64(r.p50) }),
				median(rs, func(r benchResult) float64 { return float64(r.p99) }), median(rs, func(r benchResult) float64 { return float64(r.cpuPerOp()) })}
		}
		nc := figs["nutcracker"]
		for _, tg := range targets {
			f := figs[tg.name]
			fmt.Fprintf(&report, "%-12s %-22s %10.0f %9v %9v %9v %7.2f %7.2f %7.2f %7.2f\n", l.name, tg.name, f.ops,
				time.Duration(f.p50).Round(time.Microsecond), time.Duration(f.p99).Round(time.Microsecond),
				time.Duration(f.cpu).Round(100*time.Nanosecond), f.ops/nc.ops, f.p50/nc.p50, f.p99/nc.p99, f.cpu/nc.cpu)
		}
	}
	t.Log(report.String())
}

// startProxyProcess runs the proxy in a child process, the proxy test
// binary bin, with GOMAXPROCS=procs (0: unset, the default) and returns
// its pid.
func startProxyProcess(t *testing.T, bin, yaml, addr string, procs int) int {
	path := filepath.Join(t.TempDir(), "kolco.yml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestHelperProxyProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	if procs > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprint("GOMAXPROCS=", procs))
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := testproc.Start(cmd); err != nil {
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
	return cmd.Process.Pid
}
