//go:build linux

package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// TestProxyHandoverEndsAfterAClientArrivesMidway: a "kolco proxy"
// process handed over (SIGUSR2) while a client connects - one, then no
// other, as the fault schedule's clients reconnect to a proxy just
// started and then keep their connections - exits once the new process
// serves, and its listening socket stays non-blocking throughout (read
// from /proc/PID/fdinfo: the mode is the socket's open file description's,
// which both processes share). Passing its socket made it blocking until
// the new process had started: the client that came then left the old
// process's accept loop asleep in accept(2), and its shutdown waited for
// it while no other client came (seed 2643: a minute, the old process
// serving its clients by a configuration no SIGHUP reached).
func TestProxyHandoverEndsAfterAClientArrivesMidway(t *testing.T) {
	port := realprog.FreePorts(t, 1)[0]
	listen := fmt.Sprintf("127.0.0.1:%d", port)
	y := fmt.Sprintf("alpha:\n  listen: %s\n  distribution: ketama\n  timeout: 10000\n  servers:\n   - %s:1\n", listen, startMemcached(t))
	p := startPidProxy(t, y, port)
	old := readPid(p.pid)
	fdinfo := filepath.Join("/proc", strconv.Itoa(old), "fdinfo", strconv.Itoa(listeningFD(t, old, port)))

	if err := testproc.KillOwn(old, syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	var looks, blocking int
	// The clients that connect as the new process starts: one at the
	// first look, whatever the socket's mode, and one at the first look
	// that finds it blocking, which put the old process's accept to
	// sleep before.
	var first, midway net.Conn
	defer func() {
		for _, c := range []net.Conn{first, midway} {
			if c != nil {
				c.Close()
			}
		}
	}()
	for deadline := time.Now().Add(realprog.Patience); ; {
		if n := readPid(p.pid); n != 0 && n != old {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new process serves %v after SIGUSR2", realprog.Patience)
		}
		b, err := os.ReadFile(fdinfo)
		if err != nil {
			break // the old process has gone
		}
		looks++
		if first == nil {
			first = answeredClient(t, listen)
		}
		if nonBlocking(t, string(b)) {
			continue // polling the socket's mode through the handover
		}
		blocking++
		if midway == nil {
			midway = answeredClient(t, listen)
		}
	}
	if blocking > 0 {
		t.Errorf("the listening socket was blocking in %d of %d looks during the handover", blocking, looks)
	}
	bound := time.Duration(busy() * float64(5*time.Second))
	select {
	case <-p.exited:
	case <-time.After(bound):
		t.Fatalf("the old process has not exited %v after the new one served (a client connected midway: %v, another while the socket was blocking: %v)", bound, first != nil, midway != nil)
	}
}

// listeningFD returns the descriptor by which process pid listens on
// port of 127.0.0.1: the socket whose inode /proc/net/tcp gives that port
// in state LISTEN (0A).
func listeningFD(t *testing.T, pid, port int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	inode := ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 9 && f[1] == fmt.Sprintf("0100007F:%04X", port) && f[3] == "0A" {
			inode = f[9]
		}
	}
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(dir)
	if err != nil || inode == "" {
		t.Fatalf("no listening socket of port %d (%v)", port, err)
	}
	for _, e := range entries {
		if link, _ := os.Readlink(filepath.Join(dir, e.Name())); link == "socket:["+inode+"]" {
			fd, _ := strconv.Atoi(e.Name())
			return fd
		}
	}
	t.Fatalf("process %d holds no descriptor of socket %s", pid, inode)
	return -1
}

// nonBlocking reports whether an fdinfo file's flags (octal) hold
// O_NONBLOCK.
func nonBlocking(t *testing.T, fdinfo string) bool {
	t.Helper()
	for _, line := range strings.Split(fdinfo, "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			if err != nil {
				t.Fatal(err)
			}
			return flags&syscall.O_NONBLOCK != 0
		}
	}
	t.Fatalf("fdinfo without flags:\n%s", fdinfo)
	return false
}

// answeredClient connects to addr and has one request answered, and
// keeps the connection open.
func answeredClient(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, realprog.Patience)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(realprog.Patience))
	if _, err := c.Write([]byte("get k\r\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "END\r\n" {
		t.Fatalf("the client that connected midway: %q %v", line, err)
	}
	_ = c.SetDeadline(time.Time{})
	return c
}
