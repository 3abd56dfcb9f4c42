package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
	"github.com/kolco-dev/kolco/proxy/memcache"
)

// loopClient connects, sets a key, reads the reply and closes, again and
// again, counting connections refused and requests not answered.
type loopClient struct {
	mu                sync.Mutex
	ok, refused, lost int
	firstLost         error
}

func (lc *loopClient) once(addr string, i int) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		lc.count(&lc.refused, err)
		return
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(conn, "set loop%d 0 0 1\r\nx\r\n", i); err != nil {
		lc.count(&lc.lost, err)
		return
	}
	reply, _, err := memcache.NewReplyReader(conn, 0).Read(nil, memcache.CmdSet, nil)
	if err != nil || string(reply) != "STORED\r\n" {
		lc.count(&lc.lost, fmt.Errorf("reply %q: %v", reply, err))
		return
	}
	lc.count(&lc.ok, nil)
}

func (lc *loopClient) count(n *int, err error) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	*n++
	if err != nil && lc.firstLost == nil {
		lc.firstLost = err
	}
}

func (lc *loopClient) okCount() int {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.ok
}

// TestProxyHandover: SIGUSR2 starts a new process that takes over the
// listening sockets (the pool's and the stats port's) while the old one
// drains its clients and exits. Clients connecting in a loop throughout are
// never refused, and every request they send is answered.
func TestProxyHandover(t *testing.T) {
	conf, listen, _ := unitFileConfig(t)
	dir := t.TempDir()
	pidPath, logPath := filepath.Join(dir, "kolco.pid"), filepath.Join(dir, "kolco.log")
	statsPort := realprog.FreePorts(t, 1)[0]
	old := program(t, "kolco", "proxy", "-c", conf, "-p", pidPath, "-o", logPath, "-s", strconv.Itoa(statsPort), "-a", "127.0.0.1")
	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	var oldErr error
	oldDone := make(chan struct{})
	go func() {
		oldErr = old.Wait()
		close(oldDone)
	}()
	t.Cleanup(func() { _ = old.Process.Kill(); <-oldDone })
	_, port, _ := strings.Cut(listen, ":")
	n, _ := strconv.Atoi(port)
	realprog.WaitListening(t, "kolco proxy", []int{n}, oldDone)

	// Several clients, so that connections are being opened at every
	// moment of the handover, the old process's last ones included.
	lc := &loopClient{}
	stop := make(chan struct{})
	var looping sync.WaitGroup
	for g := range 8 {
		looping.Add(1)
		go func() {
			defer looping.Done()
			deadline := time.Now().Add(60 * time.Second)
			for i := 0; i < 20000 && time.Now().Before(deadline); i++ {
				select {
				case <-stop:
					return
				default:
				}
				lc.once(listen, g*100000+i)
			}
		}()
	}
	eventually(t, "the loop under way", func() bool { return lc.okCount() >= 50 })
	if err := old.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	select {
	case <-oldDone:
	case <-time.After(30 * time.Second):
		t.Fatal("the old process did not exit after the handover")
	}
	if oldErr != nil {
		t.Errorf("the old process: %v", oldErr)
	}
	b, _ := os.ReadFile(pidPath)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid == 0 || pid == old.Process.Pid || testproc.Gone(pid) {
		t.Fatalf("pid file %q after the handover: want the new process, alive", b)
	}
	t.Cleanup(func() {
		_ = testproc.KillOwn(pid, syscall.SIGTERM)
		eventually(t, "the new process gone", func() bool { return testproc.Gone(pid) })
	})
	after := lc.okCount()
	eventually(t, "the loop served by the new process", func() bool { return lc.okCount() >= after+200 })
	close(stop)
	looping.Wait()
	if lc.refused != 0 || lc.lost != 0 {
		t.Errorf("%d connections refused and %d requests lost of %d (first: %v)", lc.refused, lc.lost, lc.ok+lc.refused+lc.lost, lc.firstLost)
	}
	if !strings.Contains(readUntilClosed(t, fmt.Sprintf("127.0.0.1:%d", statsPort)), `"alpha":`) {
		t.Error("the stats port was not taken over")
	}
	log, _ := os.ReadFile(logPath)
	for _, want := range []string{"SIGUSR2: the new process serves", "shut down"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	t.Logf("%d requests answered, none refused or lost, across the handover", lc.ok)
}

// pidProxy is a "kolco proxy" process started with a pid file, in which
// a test finds the process a handover starts.
type pidProxy struct {
	pid, log string
	exited   chan struct{} // closed when the first process has exited
}

// startPidProxy runs "kolco proxy" on the configuration y with a pid file
// and a log file, and waits until ports listen and the pid file names the
// process; Cleanup kills the process the pid file names and the first one,
// and logs the log file if the test failed. The process writes its pid
// file once its pools serve, after it listens: a pool on a membership
// source listens and answers the admin socket before its source's first
// version is applied, and a test that read the pid file then found none
// (TestProxyHandoverEtcd under load 25: "os: process already finished").
func startPidProxy(t *testing.T, y string, ports ...int) *pidProxy {
	t.Helper()
	dir := t.TempDir()
	p := &pidProxy{pid: filepath.Join(dir, "kolco.pid"), log: filepath.Join(dir, "kolco.log"), exited: make(chan struct{})}
	conf := filepath.Join(dir, "nutcracker.yml")
	if err := os.WriteFile(conf, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := program(t, "kolco", "proxy", "-c", conf, "-p", p.pid, "-o", p.log)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		if n := readPid(p.pid); n != 0 {
			_ = testproc.KillOwn(n, syscall.SIGKILL)
		}
		_ = cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			log, _ := os.ReadFile(p.log)
			t.Logf("the proxies' log:\n%s", log)
		}
	})
	realprog.WaitListening(t, "kolco proxy", ports, p.exited)
	eventuallyWithin(t, time.Duration(busy()*float64(10*time.Second)), "the proxy's pid file", func() bool { return readPid(p.pid) == cmd.Process.Pid })
	return p
}
