package proxy

import (
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// The Redis comparison runs only when KOLCO_PROXY_BENCH=1 (about 90 s):
//
//	KOLCO_PROXY_BENCH=1 go test -run TestRedisProxyComparison -v ./proxy/
//
// It starts two redis-servers, nutcracker in front of them, and the proxy
// in a child process (this test binary re-executed) with GOMAXPROCS set to
// 1 and to the core count, and at its default (threads adapted to the
// load, as kolco proxy runs), and drives each with redis-benchmark: GET,
// SET and a 10-key MGET (custom-command mode), one request at a time per
// client and 16 pipelined, in five interleaved rounds. It reports the median round's
// throughput of each as a ratio to nutcracker's, and the CPU time each
// proxy process spent per request, read from /proc.

// redisLoad is one redis-benchmark load.
type redisLoad struct {
	name string
	args []string
}

// redisLoads are the comparison's loads: GET, SET and MGET of 10 keys,
// unpipelined and 16 at a time.
func redisLoads() []redisLoad {
	mget := []string{"MGET"}
	for i := range 10 {
		mget = append(mget, fmt.Sprintf("key:%d:__rand_int__", i))
	}
	var loads []redisLoad
	for _, p := range []string{"1", "16"} {
		pipe := []string{"-P", p}
		loads = append(loads,
			redisLoad{"GET -P " + p, append([]string{"-t", "get"}, pipe...)},
			redisLoad{"SET -P " + p, append([]string{"-t", "set"}, pipe...)},
			redisLoad{"MGET 10 keys -P " + p, append(pipe, mget...)})
	}
	return loads
}

// benchRound is one redis-benchmark run on one target.
type benchRound struct {
	rps     float64
	cpuPerR time.Duration // the target process's CPU time per request
}

func TestRedisProxyComparison(t *testing.T) {
	if os.Getenv(benchEnv) != "1" {
		t.Skipf("set %s=1 to run the Redis proxy comparison (about 90 s)", benchEnv)
	}
	bench := realprog.Binary(t, "redis-tools", "redis-benchmark")
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	servers := fmt.Sprintf("  redis: true\n  servers:\n   - %s:1\n   - %s:1\n", rs[0].addr, rs[1].addr)
	ncAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	targets := []benchTarget{{"redis-server direct", rs[0].addr, 0},
		{"nutcracker", ncAddr, startNutcracker(t, "p:\n  listen: "+ncAddr+"\n"+servers, ncAddr)}}
	for _, procs := range []int{1, runtime.NumCPU(), 0} {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		pid := startProxyProcess(t, os.Args[0], "p:\n  listen: "+addr+"\n"+servers, addr, procs)
		name := fmt.Sprintf("kolco GOMAXPROCS=%d", procs)
		if procs == 0 {
			name = "kolco default"
		}
		targets = append(targets, benchTarget{name, addr, pid})
	}
	load1, _ := os.ReadFile("/proc/loadavg")
	var report strings.Builder
	fmt.Fprintf(&report, "\n%-20s %-20s %12s %8s %12s\n", "load", "target", "requests/s", "x nc", "CPU us/req")
	for _, l := range redisLoads() {
		rounds := map[string][]benchRound{}
		for range 5 {
			for _, tg := range targets {
				rounds[tg.name] = append(rounds[tg.name], runBenchmark(t, bench, tg, l))
			}
		}
		med := map[string]benchRound{}
		for name, rr := range rounds {
			slices.SortFunc(rr, func(a, b benchRound) int { return int(a.rps - b.rps) })
			med[name] = rr[len(rr)/2]
		}
		for _, tg := range targets {
			r := med[tg.name]
			cpu := "-"
			if tg.pid != 0 {
				cpu = fmt.Sprintf("%.1f", float64(r.cpuPerR.Nanoseconds())/1000)
			}
			fmt.Fprintf(&report, "%-20s %-20s %12.0f %8.2f %12s\n", l.name, tg.name, r.rps, r.rps/med["nutcracker"].rps, cpu)
		}
	}
	load2, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&report, "load average before: %s, after: %s", strings.TrimSpace(string(load1)), strings.TrimSpace(string(load2)))
	t.Log(report.String())
}

// runBenchmark runs redis-benchmark's load l against tg: 16 clients,
// 40000 requests (80000 pipelined), and returns its throughput and the
// CPU time tg's process spent per request.
func runBenchmark(t *testing.T, bin string, tg benchTarget, l redisLoad) benchRound {
	host, port, _ := strings.Cut(tg.addr, ":")
	n := "40000"
	if slices.Contains(l.args, "16") {
		n = "160000"
	}
	args := append([]string{"-h", host, "-p", port, "-c", "16", "-n", n, "-r", "10000", "-d", "100", "--csv"}, l.args...)
	var cpu0 time.Duration
	if tg.pid != 0 {
		cpu0 = cpuTime(t, tg.pid)
	}
	out, err := testproc.CombinedOutput(exec.Command(bin, args...))
	if err != nil {
		t.Fatalf("redis-benchmark %q: %v\n%s", args, err, out)
	}
	var cpu time.Duration
	if tg.pid != 0 {
		cpu = cpuTime(t, tg.pid) - cpu0
	}
	recs, err := csv.NewReader(strings.NewReader(lastLines(string(out), 2))).ReadAll()
	if err != nil || len(recs) != 2 || len(recs[1]) < 2 {
		t.Fatalf("redis-benchmark output %q: %v", out, err)
	}
	rps, err := strconv.ParseFloat(recs[1][1], 64)
	if err != nil {
		t.Fatal(err)
	}
	reqs, _ := strconv.Atoi(n)
	return benchRound{rps: rps, cpuPerR: cpu / time.Duration(reqs)}
}

// lastLines returns the last n lines of s: redis-benchmark's CSV header
// and row, after its warnings.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
