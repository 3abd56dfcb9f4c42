package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/storecheck"
	"github.com/kolco-dev/kolco/internal/testproc"
	"github.com/kolco-dev/kolco/proxy"
)

// storeProc is a kolco proxy process serving a Redis store pool "rd"
// over some of five redis-servers, from a nutcracker.yml it rewrites.
type storeProc struct {
	t          *testing.T
	redis      []string
	conf, pid  string
	dir        string
	listen     int
	admin      int
	cmd        *exec.Cmd
	exited     chan struct{}
	extra      string
	currentPid int
}

func newStoreProc(t *testing.T, extra string) *storeProc {
	p := &storeProc{t: t, dir: t.TempDir(), extra: extra}
	for range 5 {
		p.redis = append(p.redis, startRedisServer(t))
	}
	ports := realprog.RestartablePorts(t, 2) // below the ephemeral range: no outgoing connection takes them meanwhile
	p.listen, p.admin = ports[0], ports[1]
	p.conf, p.pid = filepath.Join(p.dir, "nutcracker.yml"), filepath.Join(p.dir, "kolco.pid")
	t.Cleanup(func() {
		if p.currentPid != 0 {
			_ = testproc.KillOwn(p.currentPid, syscall.SIGKILL)
		}
	})
	return p
}

// write writes the configuration with the first n servers.
func (p *storeProc) write(n int) {
	var lines []string
	for i, addr := range p.redis[:n] {
		lines = append(lines, fmt.Sprintf("\"%s:1 r%d\"", addr, i))
	}
	y := fmt.Sprintf("kolco:\n  admin_listen: 127.0.0.1:%d\nrd:\n  listen: 127.0.0.1:%d\n  redis: true\n  distribution: ring\n  timeout: 5000\n"+
		"  store: {enabled: true, rate: 200}\n%s  servers: [%s]\n", p.admin, p.listen, p.extra, strings.Join(lines, ", "))
	if err := os.WriteFile(p.conf, []byte(y), 0o600); err != nil {
		p.t.Fatal(err)
	}
}

// start starts a proxy process and waits for it to listen.
func (p *storeProc) start() {
	p.cmd = program(p.t, "kolco", "proxy", "-c", p.conf, "-p", p.pid, "-o", filepath.Join(p.dir, "kolco.log"))
	if err := testproc.Start(p.cmd); err != nil {
		p.t.Fatal(err)
	}
	p.exited = make(chan struct{})
	cmd, exited := p.cmd, p.exited
	go func() { _ = cmd.Wait(); close(exited) }()
	p.currentPid = p.cmd.Process.Pid
	realprog.WaitListening(p.t, "kolco proxy", []int{p.listen, p.admin}, p.exited)
}

func (p *storeProc) addr() string { return fmt.Sprintf("127.0.0.1:%d", p.listen) }

// status returns the pool as the admin endpoint reports it.
func (p *storeProc) status() (proxy.PoolStatus, error) {
	var ps proxy.PoolStatus
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/v1/pools/rd", p.admin))
	if err != nil {
		return ps, err
	}
	defer resp.Body.Close()
	return ps, json.NewDecoder(resp.Body).Decode(&ps)
}

// moving waits until the mover has moved some keys, and fails if the move
// ended first.
func (p *storeProc) moving() {
	p.t.Helper()
	deadline := time.Now().Add(time.Duration(busy() * float64(20*time.Second)))
	for time.Now().Before(deadline) {
		ps, err := p.status()
		if err == nil && ps.Move != nil && ps.Move.Moved > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Fatal("no move under way")
}

// moved waits until the pool has no move under way.
func (p *storeProc) moved() {
	p.t.Helper()
	deadline := time.Now().Add(time.Duration(busy() * float64(60*time.Second)))
	for time.Now().Before(deadline) {
		if ps, err := p.status(); err == nil && ps.Move == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.t.Fatal("the move did not end")
}

// reload rewrites the configuration with n servers and sends SIGHUP.
func (p *storeProc) reload(n int) {
	p.write(n)
	if err := testproc.KillOwn(p.currentPid, syscall.SIGHUP); err != nil {
		p.t.Fatal(err)
	}
	// Stretched by the load: at 8 busy processes on 2 cores, with the
	// test's traffic, a reload was not applied within 10 s.
	deadline := time.Now().Add(time.Duration(busy() * float64(10*time.Second)))
	for time.Now().Before(deadline) {
		if ps, err := p.status(); err == nil && len(ps.Servers) == n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Fatalf("the reload to %d servers was not applied", n)
}

// checkPlaced checks on the servers that each key is on the server the
// proxy's placement names (GET /v1/pools/rd/locate) and on no other;
// must says that each exists.
func (p *storeProc) checkPlaced(keys []string, must bool) {
	p.t.Helper()
	direct := make([]*rawRedis, len(p.redis))
	for i, a := range p.redis {
		direct[i] = dialRaw(p.t, a)
	}
	bad := 0
	for start := 0; start < len(keys); start += 200 {
		batch := keys[start:min(start+200, len(keys))]
		q := url.Values{"key": batch}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/v1/pools/rd/locate?%s", p.admin, q.Encode()))
		if err != nil {
			p.t.Fatal(err)
		}
		var locs []proxy.Location
		err = json.NewDecoder(resp.Body).Decode(&locs)
		resp.Body.Close()
		if err != nil || len(locs) != len(batch) {
			p.t.Fatalf("locate: %v", err)
		}
		for i, k := range batch {
			owner := locs[i].Servers[0].Addr
			var on []string
			for j, c := range direct {
				if c.do("EXISTS", k) == ":1\r\n" {
					on = append(on, p.redis[j])
				}
			}
			if len(on) > 1 || len(on) == 1 && on[0] != owner || must && len(on) == 0 {
				if bad++; bad <= 5 {
					p.t.Errorf("%s is on %v; its server is %s", k, on, owner)
				}
			}
		}
	}
	if bad > 0 {
		p.t.Errorf("%d of %d keys misplaced", bad, len(keys))
	}
}

// rawRedis is a minimal client for the tests' direct checks.
type rawRedis struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawRedis {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawRedis{t: t, c: c, r: bufio.NewReader(c)}
}

// do sends a command and returns its one-line reply.
func (r *rawRedis) do(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := r.c.Write([]byte(b.String())); err != nil {
		r.t.Fatal(err)
	}
	line, err := r.r.ReadString('\n')
	if err != nil {
		r.t.Fatal(err)
	}
	return line
}

// fill writes n keys through addr and returns them.
func fill(t *testing.T, addr string, n int) []string {
	c := dialRaw(t, addr)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "fill:" + strconv.Itoa(i)
		if got := c.do("SET", keys[i], "v"); got != "+OK\r\n" {
			t.Fatalf("SET %s: %q", keys[i], got)
		}
	}
	return keys
}

// TestProxyStoreSurvivesCrashAndHandover: eight clients through a store
// pool of a kolco proxy process while it goes from 4 redis-servers to 5
// and back, the process killed with SIGKILL mid-move and started again,
// or handed over with SIGUSR2 mid-move: the new process goes on with the
// move the state file records, every client's history is linearizable,
// and every key is on its server alone afterwards.
func TestProxyStoreSurvivesCrashAndHandover(t *testing.T) {
	for _, how := range []string{"kill -9", "SIGUSR2"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			p := newStoreProc(t, "")
			p.write(4)
			p.start()
			fillers := fill(t, p.addr(), 3000)
			run := storecheck.Start(storecheck.Config{Addrs: []string{p.addr()}, Seed: 11})
			time.Sleep(300 * time.Millisecond)
			p.reload(5)
			p.moving()
			if how == "kill -9" {
				if err := testproc.KillOwn(p.currentPid, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				<-p.exited
				p.start()
			} else {
				old := p.currentPid
				if err := testproc.KillOwn(old, syscall.SIGUSR2); err != nil {
					t.Fatal(err)
				}
				deadline := time.Now().Add(20 * time.Second)
				for !testproc.Gone(old) || p.pidFile() == old {
					if time.Now().After(deadline) {
						t.Fatal("the handover did not end")
					}
					time.Sleep(20 * time.Millisecond)
				}
				p.currentPid = p.pidFile()
			}
			if ps, err := p.status(); err != nil || ps.Move == nil {
				t.Fatalf("the new process has no move under way (%v): it did not go on with the first's", err)
			}
			p.moved()
			p.checkPlaced(fillers, true)
			p.reload(4)
			p.moved()
			time.Sleep(300 * time.Millisecond)
			history := run.Stop()
			t.Logf("%s: %d requests answered, %d refused with -TRYAGAIN, %d of unknown outcome; first failures: %s",
				how, run.Answered, run.Retried, run.Unknown, strings.Join(run.Errors, "; "))
			if run.Answered < 1000 {
				t.Fatalf("only %d requests answered", run.Answered)
			}
			if res, why := storecheck.Check(history, 2*time.Minute); res != porcupine.Ok {
				t.Fatalf("the history is not linearizable (%v):\n%s", res, why)
			}
			p.checkPlaced(fillers, true)
			var keys []string
			for i := range 64 {
				keys = append(keys, run.Key(i))
			}
			p.checkPlaced(keys, false)
		})
	}
}

// pidFile returns the pid the pid file holds, or 0.
func (p *storeProc) pidFile() int {
	b, _ := os.ReadFile(p.pid)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}
