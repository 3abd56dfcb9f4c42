// Package realprog helps tests that compare kolco with a real program (nginx,
// HAProxy, ...) started on 127.0.0.1: find the binary, pick free ports, and
// wait until the program listens.
package realprog

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Binary returns the path of the first of names found on PATH (or as an
// absolute path). When none is, it skips the test, or fails it when the
// environment variable CI is "true", where .ci/run installs pkg.
func Binary(t testing.TB, pkg string, names ...string) string {
	t.Helper()
	for _, n := range names {
		if path, err := exec.LookPath(n); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not installed (Debian package %s)", names[0], pkg)
	}
	t.Skipf("%s not installed (Debian package %s); skipping the real-program comparison", names[0], pkg)
	return ""
}

// FreePorts returns n distinct free TCP ports on 127.0.0.1.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// Patience bounds a test's wait for what must happen - a program
// listening, a server answering, a condition holding. It is no measure of
// how soon: generous, so that a machine busy with other work makes a test
// slower, never fail; a wait that runs out is a defect found, not a slow
// machine.
const Patience = time.Minute

// RestartablePorts returns n free ports on 127.0.0.1 below the kernel's
// range of ephemeral ports. A server a test starts again must bind its
// ports again while other programs run: a port of the ephemeral range may
// meanwhile be the local end of any outgoing connection (a client
// retrying, a proxy's connection to a server), and the start would fail
// with "address already in use".
func RestartablePorts(t testing.TB, n int) []int {
	t.Helper()
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil && v > 20000 {
				low = v
			}
		}
	}
	var ports []int
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for tries := 0; len(ports) < n && tries < 1000; tries++ {
		p := 20000 + rand.IntN(low-20000)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue // in use
		}
		held = append(held, l)
		ports = append(ports, p)
	}
	if len(ports) < n {
		return FreePorts(t, n) // a range with no room: take ephemeral ones
	}
	return ports
}

// WaitListening waits up to Patience until every port accepts a
// connection, failing the test if it does not or if exited is closed first
// (the program died while starting).
func WaitListening(t testing.TB, what string, ports []int, exited <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(Patience)
	for _, p := range ports {
		for {
			c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p), time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-exited:
				t.Fatalf("%s exited during startup", what)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: port %d not listening after %v", what, p, Patience)
			}
			time.Sleep(20 * time.Millisecond) // polling for readiness, not ordering
		}
	}
}

// Busy is how many times over the machine's CPUs are asked for, by the
// load average of the last minute, and 1 on a machine that is not busy: a
// bound on how soon something happens is stretched by it, so that a busy
// machine makes a test slower, not failed.
func Busy() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 1
	}
	load, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 1
	}
	return max(1, load/float64(runtime.NumCPU()))
}
