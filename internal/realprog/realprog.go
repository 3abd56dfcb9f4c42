// Package realprog helps tests that compare kolco with a real program (nginx,
// HAProxy, ...) started on 127.0.0.1: find the binary, pick free ports, and
// wait until the program listens.
package realprog

import (
	"fmt"
	"net"
	"os"
	"os/exec"
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
