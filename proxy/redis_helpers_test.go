package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
	"github.com/kolco-dev/kolco/proxy/redis"
)

// redisServer is a real redis-server started by a test on 127.0.0.1.
type redisServer struct {
	addr   string
	port   int
	args   []string
	cmd    *exec.Cmd
	exited chan struct{}
}

// startRedis starts redis-server with no persistence on a free port (or
// on port when non-zero), plus extra arguments, waits until it listens,
// and kills it when the test ends.
func startRedis(t testing.TB, port int, extra ...string) *redisServer {
	t.Helper()
	for attempt := 0; ; attempt++ {
		p := port
		if p == 0 {
			p = realprog.FreePorts(t, 1)[0]
		}
		r := &redisServer{addr: fmt.Sprintf("127.0.0.1:%d", p), port: p}
		r.args = append([]string{"--port", strconv.Itoa(p), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--logfile", "", "--dir", t.TempDir()}, extra...)
		// Another program may have taken the port between its choice
		// and the bind: then this server exits, or the one answering is
		// not this one. A port the test chose is tried again.
		retry := port == 0 && attempt < 4
		if !r.startOrExit(t, retry) {
			continue
		}
		if r.ours() || !retry {
			t.Cleanup(r.stop)
			return r
		}
		r.stop()
	}
}

// ours reports whether the server answering at r's address is r's
// process, or cannot tell (a server speaking TLS or wanting a password).
func (r *redisServer) ours() bool {
	pid, err := realprog.RedisPID(r.addr)
	select {
	case <-r.exited:
		return false // it lost the port; another program answered
	default:
	}
	return err != nil || pid == r.cmd.Process.Pid
}

// start runs the server with its arguments and waits until it listens.
func (r *redisServer) start(t testing.TB) {
	t.Helper()
	r.startOrExit(t, false)
}

// startOrExit runs the server with its arguments and waits until it
// listens. When it exits first (its port taken), it returns false if
// mayFail, else fails the test.
func (r *redisServer) startOrExit(t testing.TB, mayFail bool) bool {
	t.Helper()
	bin := realprog.Binary(t, "redis-server", "redis-server")
	r.cmd = exec.Command(bin, r.args...)
	if err := testproc.Start(r.cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func(cmd *exec.Cmd) {
		_ = cmd.Wait()
		close(exited)
	}(r.cmd)
	r.exited = exited
	if !waitServing(t, r.addr, exited) {
		r.cmd = nil
		if mayFail {
			return false
		}
		t.Fatalf("redis-server on %s exited during startup", r.addr)
	}
	return true
}

// stop kills the server and waits until it is gone.
func (r *redisServer) stop() {
	if r.cmd != nil {
		_ = r.cmd.Process.Kill()
		<-r.exited
		r.cmd = nil
	}
}

// redisPoolYAML writes a one-pool Redis configuration listening on a free
// port, with extra pool settings, over servers named r0, r1, ...
func redisPoolYAML(extra string, servers ...*redisServer) string {
	var b strings.Builder
	b.WriteString("p:\n  listen: 127.0.0.1:0\n  redis: true\n")
	b.WriteString(extra)
	if !strings.Contains(extra, "  timeout:") {
		b.WriteString("  timeout: 10000\n") // see poolYAML
	}
	b.WriteString("  servers:\n")
	for i, r := range servers {
		fmt.Fprintf(&b, "   - %s:1 r%d\n", r.addr, i)
	}
	return b.String()
}

// rc is a minimal Redis test client.
type rc struct {
	t    testing.TB
	conn net.Conn
	w    *bufio.Writer
	rr   *redis.ReplyReader
	// guard bounds the wait for each reply (see dialRedis); zero when
	// the test sets the connection's deadline itself.
	guard time.Duration
}

func dialRedis(t testing.TB, addr string) *rc {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// A guard against a test that waits for a reply that never comes; no
	// test relies on it to pass. It bounds each reply's wait, set by read,
	// as mc's mcPatience does: a deadline set once here failed whatever a
	// connection sent or read 60 s after its dial, however soon the reply
	// came - in one run at load 43-60 on 2 cores, i/o timeouts in
	// TestStoreMovesKeys (at 62 and 64 s), a write of
	// TestStoreLinearizable, TestStoreFleetLinearizable's EXISTS straight
	// to a redis-server, and TestNutcrackerLosesStoreKeys' GET through
	// nutcracker, where no kolco runs.
	_ = conn.SetDeadline(time.Now().Add(replyGuard)) // for a test that reads c.rr itself
	// RESP3 is read too: a connection that asked for it with HELLO 3.
	return &rc{t: t, conn: conn, w: bufio.NewWriter(conn), rr: redis.NewReplyReader(conn, redis.ReplyLimits{RESP3: true}), guard: replyGuard}
}

// replyGuard is rc's bound on the wait for one reply.
const replyGuard = 60 * time.Second

// setDeadline sets the connection's deadline for the rest of the test,
// in place of the guard on each reply.
func (c *rc) setDeadline(t time.Time) {
	c.guard = 0
	_ = c.conn.SetDeadline(t)
}

// send writes a request of args without flushing.
func (c *rc) send(args ...string) {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	_, _ = c.w.Write(redis.AppendArgs(nil, b))
}

// read flushes what was sent and reads one reply; io.EOF and the like
// come back as errors.
func (c *rc) read() (string, error) {
	if c.guard > 0 {
		_ = c.conn.SetDeadline(time.Now().Add(c.guard))
	}
	if err := c.w.Flush(); err != nil {
		return "", err
	}
	b, _, err := c.rr.Read(nil, nil)
	return string(b), err
}

// do sends one request and returns its reply, failing the test on a
// read error.
func (c *rc) do(args ...string) string {
	c.t.Helper()
	c.send(args...)
	reply, err := c.read()
	if err != nil {
		c.t.Fatalf("%q: %v", args, err)
	}
	return reply
}

// doMany sends each of reqs and returns their replies in order, a
// hundred requests sent before their replies are read: a hundredth of the
// round trips of do, for tests that read thousands of keys. It fails the
// test on a read error.
func (c *rc) doMany(reqs [][]string) []string {
	c.t.Helper()
	replies := make([]string, 0, len(reqs))
	for lo := 0; lo < len(reqs); lo += 100 {
		batch := reqs[lo:min(lo+100, len(reqs))]
		for _, args := range batch {
			c.send(args...)
		}
		for _, args := range batch {
			reply, err := c.read()
			if err != nil {
				c.t.Fatalf("%q: %v", args, err)
			}
			replies = append(replies, reply)
		}
	}
	return replies
}

// closed reports whether the other end closed the connection: the next
// read gives EOF (or a reset) rather than a reply.
func (c *rc) closed() bool {
	_, err := c.read()
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// redisArgs encodes a request of args.
func redisArgs(args [][]byte) []byte { return redis.AppendArgs(nil, args) }
