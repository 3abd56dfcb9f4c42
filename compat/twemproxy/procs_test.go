package twemproxy_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/testproc"
)

// lookPathOrSkip returns the path of a program, skipping the test when it
// is absent unless CI=true.
func lookPathOrSkip(t *testing.T, name, pkg string) string {
	t.Helper()
	for _, dir := range []string{"", "/usr/sbin/", "/usr/bin/"} {
		if p, err := exec.LookPath(dir + name); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("%s not found (install the Debian package %s)", name, pkg)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs a program until the test ends and waits until port accepts
// connections (at most 5 s, polling every 10 ms).
func start(t *testing.T, port int, name string, args ...string) {
	t.Helper()
	startOn(t, "tcp", "127.0.0.1:"+strconv.Itoa(port), name, args...)
}

// startOn is start for any network address.
func startOn(t *testing.T, network, addr string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := testproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(5 * time.Second)
	for attempt := 0; attempt < 500; attempt++ {
		c, err := net.DialTimeout(network, addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("%s exited: %v\n%s", name, err, out.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			break
		}
	}
	t.Fatalf("%s did not listen on %s", name, addr)
}

// mcConn is a minimal memcached text-protocol client.
type mcConn struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

func dialMC(t *testing.T, port int) *mcConn {
	t.Helper()
	return dialMCOn(t, "tcp", "127.0.0.1:"+strconv.Itoa(port))
}

func dialMCOn(t *testing.T, network, addr string) *mcConn {
	t.Helper()
	c, err := net.DialTimeout(network, addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return &mcConn{c: c, r: bufio.NewReaderSize(c, 1<<16), w: bufio.NewWriterSize(c, 1<<16)}
}

const batch = 200

// setAll stores value under every key, pipelining batches of requests.
func (m *mcConn) setAll(keys [][]byte, value string) error {
	for lo := 0; lo < len(keys); lo += batch {
		hi := min(lo+batch, len(keys))
		for _, k := range keys[lo:hi] {
			fmt.Fprintf(m.w, "set %s 0 0 %d\r\n%s\r\n", k, len(value), value)
		}
		if err := m.w.Flush(); err != nil {
			return err
		}
		for _, k := range keys[lo:hi] {
			line, err := m.r.ReadString('\n')
			if err != nil {
				return err
			}
			if line != "STORED\r\n" {
				return fmt.Errorf("set %q: %q", k, line)
			}
		}
	}
	return nil
}

// getAll returns, for each key, whether the server holds it with value.
func (m *mcConn) getAll(keys [][]byte, value string) ([]bool, error) {
	found := make([]bool, len(keys))
	for lo := 0; lo < len(keys); lo += batch {
		hi := min(lo+batch, len(keys))
		for _, k := range keys[lo:hi] {
			fmt.Fprintf(m.w, "get %s\r\n", k)
		}
		if err := m.w.Flush(); err != nil {
			return nil, err
		}
		for i := lo; i < hi; i++ {
			line, err := m.r.ReadString('\n')
			if err != nil {
				return nil, err
			}
			if line == "END\r\n" {
				continue
			}
			var n int
			prefix := "VALUE " + string(keys[i]) + " 0 "
			if len(line) <= len(prefix) || line[:len(prefix)] != prefix {
				return nil, fmt.Errorf("get %q: %q", keys[i], line)
			}
			n, err = strconv.Atoi(line[len(prefix) : len(line)-2])
			if err != nil {
				return nil, fmt.Errorf("get %q: %q", keys[i], line)
			}
			data := make([]byte, n+2)
			if _, err := io.ReadFull(m.r, data); err != nil {
				return nil, err
			}
			if end, err := m.r.ReadString('\n'); err != nil || end != "END\r\n" {
				return nil, fmt.Errorf("get %q: no END (%q, %v)", keys[i], end, err)
			}
			found[i] = string(data[:n]) == value
		}
	}
	return found, nil
}

// writeFile writes a file into dir and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
