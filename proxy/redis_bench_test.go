package proxy

import (
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// The Redis comparison runs only when KOLCO_PROXY_BENCH=1 (about 2
// minutes):
//
//	KOLCO_PROXY_BENCH=1 go test -run TestRedisProxyComparison -v ./proxy/
//
// It starts two redis-servers, nutcracker in front of them, and the proxy
// in a child process (this test binary re-executed, GOMAXPROCS 1 and 2),
// and drives each with redis-benchmark: GET, SET and a 10-key MGET
// (custom-command mode), one request at a time per client and 16
// pipelined, in five interleaved rounds. It reports the median round's
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

// benchTarget is one endpoint of the comparison, with the process whose
// CPU time is counted (0 for none).
type benchTarget struct {
	name string
	addr string
	pid  int
}

// benchRound is one redis-benchmark run on one target.
type benchRound struct {
	rps     float64
	cpuPerR time.Duration // the target process's CPU time per request
}

func TestRedisProxyComparison(t *testing.T) {
	if os.Getenv(benchEnv) != "1" {
		t.Skipf("set %s=1 to run the Redis proxy comparison (about 2 minutes)", benchEnv)
	}
	bench := realprog.Binary(t, "redis-tools", "redis-benchmark")
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	servers := fmt.Sprintf("  redis: true\n  servers:\n   - %s:1\n   - %s:1\n", rs[0].addr, rs[1].addr)
	ncAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	targets := []benchTarget{{"redis-server direct", rs[0].addr, 0},
		{"nutcracker", ncAddr, startNutcrackerProc(t, "p:\n  listen: "+ncAddr+"\n"+servers, ncAddr)}}
	for _, procs := range []int{1, 2} {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		pid := startProxyChild(t, "p:\n  listen: "+addr+"\n"+servers, addr, procs)
		targets = append(targets, benchTarget{fmt.Sprintf("kolco GOMAXPROCS=%d", procs), addr, pid})
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
	cpu0 := procCPU(t, tg.pid)
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-benchmark %q: %v\n%s", args, err, out)
	}
	cpu := procCPU(t, tg.pid) - cpu0
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

// procCPU returns the CPU time process pid has used, summed over its
// threads, from /proc/PID/task/*/schedstat (nanoseconds on the CPU, where
// /proc/PID/stat counts 10 ms ticks); 0 for pid 0.
func procCPU(t *testing.T, pid int) time.Duration {
	if pid == 0 {
		return 0
	}
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
		ns, _ := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
		total += time.Duration(ns)
	}
	return total
}

// startProxyChild runs the proxy in a child process (this test binary)
// with GOMAXPROCS=procs and returns its pid; Cleanup stops it.
func startProxyChild(t *testing.T, yaml, addr string, procs int) int {
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
		stdin.Close() // the child stops when its stdin closes
		_ = cmd.Wait()
	})
	waitListening(t, addr)
	return cmd.Process.Pid
}

// startNutcrackerProc runs nutcracker with yaml, waits for listen, and
// returns its process id; Cleanup kills it.
func startNutcrackerProc(t *testing.T, yaml, listen string) int {
	t.Helper()
	bin := needBinary(t, "nutcracker")
	dir := t.TempDir()
	conf := filepath.Join(dir, "nc.yml")
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", conf, "-s", fmt.Sprint(freePort(t)), "-a", "127.0.0.1", "-o", filepath.Join(dir, "nc.log"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	waitListening(t, listen)
	return cmd.Process.Pid
}
