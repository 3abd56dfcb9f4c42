package redis

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// server is a redis-server started by a test on 127.0.0.1.
type server struct {
	addr string
}

// startServer starts redis-server with no persistence on a free port,
// plus extra arguments, waits until it listens, and kills it when the test
// ends.
func startServer(t testing.TB, extra ...string) *server {
	t.Helper()
	bin := realprog.Binary(t, "redis-server", "redis-server")
	port := realprog.FreePorts(t, 1)[0]
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--logfile", ""}, extra...)
	cmd := exec.Command(bin, args...)
	if err := testproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	realprog.WaitListening(t, "redis-server", []int{port}, exited)
	return &server{addr: fmt.Sprintf("127.0.0.1:%d", port)}
}

// conn is a test client of a real server.
type conn struct {
	t  testing.TB
	c  net.Conn
	rr *ReplyReader
}

func (s *server) dial(t testing.TB) *conn {
	t.Helper()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// A guard against a test that waits for a reply that never comes; the
	// tests never rely on it to pass.
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return &conn{t: t, c: c, rr: NewReplyReader(c, ReplyLimits{})}
}

// do sends args as one request and returns the reply.
func (c *conn) do(args ...string) Reply {
	c.t.Helper()
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return c.send(AppendArgs(nil, b))
}

// send writes raw request bytes and reads one reply.
func (c *conn) send(req []byte) Reply {
	c.t.Helper()
	if _, err := c.c.Write(req); err != nil {
		c.t.Fatal(err)
	}
	data, elems, err := c.rr.Read(nil, nil)
	if err != nil {
		c.t.Fatalf("reply to %q: %v", req, err)
	}
	return Reply{Data: data, Elems: elems}
}
