package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// TestGarbageNeighbourComparison measures what a client sending garbage
// lines costs the other clients of a proxy, kolco's beside nutcracker's,
// and runs only with KOLCO_PROXY_BENCH=1 (about 30 s):
//
//	KOLCO_PROXY_BENCH=1 go test -run TestGarbageNeighbourComparison -v ./proxy/
//
// A canary of 4 closed-loop clients of get runs for 1 s alone and 1 s
// beside a client that writes 50 MB of unknown commands as fast as the
// proxy reads them (and reads what it answers), in interleaved rounds;
// the report gives the canary's p99 alone and beside it (medians of the
// rounds), and each proxy's CPU time in the rounds beside it. kolco closes
// such a client after maxErrorsInRow errors in a row, as nutcracker closes
// it at its first; the garbage client then connects again and goes on.
func TestGarbageNeighbourComparison(t *testing.T) {
	if os.Getenv(benchEnv) != "1" {
		t.Skipf("set %s=1 to run the garbage neighbour comparison (about 30 s)", benchEnv)
	}
	needBinary(t, "nutcracker")
	m := startMemcached(t, 0)
	servers := fmt.Sprintf("  servers:\n   - %s:1\n", m.addr)
	ncAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	ncPid := startNutcracker(t, "p:\n  listen: "+ncAddr+"\n"+servers, ncAddr)
	kAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	kPid := startProxyProcess(t, os.Args[0], "p:\n  listen: "+kAddr+"\n"+servers, kAddr, 0)
	targets := []benchTarget{{"nutcracker", ncAddr, ncPid}, {"kolco", kAddr, kPid}}
	for _, tg := range targets {
		dial(t, tg.addr).do("set bench:3 0 0 100\r\n" + strings.Repeat("v", 100) + "\r\n")
	}
	const rounds = 3
	alone := map[string][]benchResult{}
	beside := map[string][]benchResult{}
	garbageCPU := map[string]time.Duration{}
	for range rounds {
		for _, tg := range targets {
			alone[tg.name] = append(alone[tg.name], drive(t, tg.addr, 0, 4, time.Second, "get bench:3\r\n", memcache.CmdGet, 1))
			stop := make(chan struct{})
			done := make(chan struct{})
			cpu0 := cpuTime(t, tg.pid)
			go func() { defer close(done); garbageClient(tg.addr, 50<<20, stop) }()
			beside[tg.name] = append(beside[tg.name], drive(t, tg.addr, 0, 4, time.Second, "get bench:3\r\n", memcache.CmdGet, 1))
			close(stop)
			<-done
			garbageCPU[tg.name] += cpuTime(t, tg.pid) - cpu0
		}
	}
	var report strings.Builder
	fmt.Fprintf(&report, "\n%d interleaved rounds; a canary of 4 get clients for 1 s, alone and beside a garbage client; medians\n", rounds)
	fmt.Fprintf(&report, "%-12s %14s %14s %8s %18s\n", "proxy", "p99 alone", "p99 beside", "x", "CPU in the rounds beside")
	for _, tg := range targets {
		a := median(alone[tg.name], func(r benchResult) float64 { return float64(r.p99) })
		b := median(beside[tg.name], func(r benchResult) float64 { return float64(r.p99) })
		fmt.Fprintf(&report, "%-12s %14v %14v %8.2f %18v\n", tg.name, time.Duration(a).Round(time.Microsecond),
			time.Duration(b).Round(time.Microsecond), b/a, garbageCPU[tg.name].Round(time.Millisecond))
	}
	t.Log(report.String())
}

// garbageClient writes up to total bytes of unknown commands to addr,
// connecting again whenever the proxy closes the connection, and reads and
// drops what it answers, until stop is closed or total is written.
func garbageClient(addr string, total int, stop <-chan struct{}) {
	chunk := []byte(strings.Repeat("xyzzy plugh\r\n", 5000))
	for sent := 0; sent < total; {
		select {
		case <-stop:
			return
		default:
		}
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			return
		}
		go func() { _, _ = io.Copy(io.Discard, bufio.NewReader(conn)) }()
		for sent < total {
			select {
			case <-stop:
				conn.Close()
				return
			default:
			}
			_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
			n, err := conn.Write(chunk)
			sent += n
			if err != nil {
				break
			}
		}
		conn.Close()
	}
}
