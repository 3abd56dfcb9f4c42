package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
	"github.com/kolco-dev/kolco/membership/sentinel/sentineltest"
	"github.com/kolco-dev/kolco/proxy"
)

// TestProxySentinelFailoverDuringHandover: a kolco proxy process serving
// two Sentinel shards is handed over (SIGUSR2) at the moment a primary is
// killed, under eight writing clients that reconnect when their
// connection ends. The new process learns the new primary from the
// Sentinels: writes to every shard succeed again, and its /v1/pools names
// the promoted replica.
func TestProxySentinelFailoverDuringHandover(t *testing.T) {
	c := sentineltest.Start(t, 1000*time.Millisecond, "shard-a", "shard-b")
	ports := realprog.RestartablePorts(t, 2) // below the ephemeral range: no outgoing connection takes them meanwhile
	y := fmt.Sprintf("kolco:\n  admin_listen: 127.0.0.1:%d\np:\n  listen: 127.0.0.1:%d\n  redis: true\n  distribution: ring\n  timeout: 1000\n"+
		"  membership: {sentinel: {sentinels: [%s], interval: 500}}\n  servers:\n", ports[1], ports[0], strings.Join(c.SentinelAddrs(), ", "))
	for _, s := range c.Shards {
		y += fmt.Sprintf("   - %s:1 %s\n", s.Primary.Addr, s.Name)
	}
	pid := startPidProxy(t, y, ports...).pid
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])

	w := startWriters(t, addr, 8)
	time.Sleep(500 * time.Millisecond)
	old := readPid(pid)
	killed := time.Now()
	c.Shards[0].Primary.Kill()
	if err := testproc.KillOwn(old, syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	// The Sentinels' failover takes their down-after time and an election
	// on a calm machine; a busy one delays their timers, and a Sentinel
	// whose timer ran 2 s late stays in its TILT mode for 30 s, deciding
	// nothing, so the bound is stretched by the machine's load.
	bound := time.Duration(busy() * float64(30*time.Second))
	deadline := time.Now().Add(bound)
	for w.failed.Load() == 0 || time.Since(time.Unix(0, w.lastFail.Load())) < 2*time.Second || readPid(pid) == old {
		if time.Now().After(deadline) {
			t.Fatalf("writes still fail %v after the kill and handover (%d failed)", bound.Round(time.Second), w.failed.Load())
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.stop()
	t.Logf("a primary killed and the proxy handed over at once: %d writes failed, the last %v after; %d acknowledged",
		w.failed.Load(), time.Unix(0, w.lastFail.Load()).Sub(killed).Round(time.Millisecond), w.acked.Load())
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/v1/pools/p", ports[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ps proxy.PoolStatus
	if err := json.NewDecoder(resp.Body).Decode(&ps); err != nil {
		t.Fatal(err)
	}
	for _, s := range ps.Servers {
		if s.Name == "shard-a" && s.Addr != c.Shards[0].Replica.Addr {
			t.Errorf("the new process serves shard-a at %s, not its promoted replica %s", s.Addr, c.Shards[0].Replica.Addr)
		}
	}
}

// readPid returns the pid a pid file holds, or 0.
func readPid(path string) int {
	b, _ := os.ReadFile(path)
	var n int
	fmt.Sscanf(strings.TrimSpace(string(b)), "%d", &n)
	return n
}

// dialRedisOnce connects to addr, or returns the error.
func dialRedisOnce(t *testing.T, addr string) (*rawRedis, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	return &rawRedis{t: t, c: c, r: bufio.NewReader(c)}, nil
}

// tryDo sends a command and returns its one-line reply, or the error of a
// connection that failed or ended, within 5 s.
func (r *rawRedis) tryDo(args ...string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_ = r.c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	return r.r.ReadString('\n')
}

// writers are clients writing distinct keys through a proxy, one request
// at a time, connecting again when their connection ends.
type writers struct {
	done          atomic.Bool
	failed, acked atomic.Int64
	lastFail      atomic.Int64 // unix nanoseconds
	wg            sync.WaitGroup
}

func startWriters(t *testing.T, addr string, n int) *writers {
	w := &writers{}
	for i := range n {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.run(t, addr, i)
		}()
	}
	return w
}

func (w *writers) run(t *testing.T, addr string, i int) {
	var r *rawRedis
	defer func() {
		if r != nil {
			r.c.Close()
		}
	}()
	for n := 0; !w.done.Load() && n < 1_000_000; n++ {
		if r == nil {
			var err error
			if r, err = dialRedisOnce(t, addr); err != nil {
				w.fail()
				time.Sleep(10 * time.Millisecond)
				continue
			}
		}
		reply, err := r.tryDo("SET", fmt.Sprintf("h:%d:%d", i, n), "v")
		switch {
		case err != nil:
			r.c.Close()
			r = nil
		case reply == "+OK\r\n":
			w.acked.Add(1)
			continue
		}
		w.fail()
		time.Sleep(time.Millisecond)
	}
}

func (w *writers) fail() {
	w.failed.Add(1)
	w.lastFail.Store(time.Now().UnixNano())
}

func (w *writers) stop() {
	w.done.Store(true)
	w.wg.Wait()
}
