package mover

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
	"github.com/kolco-dev/kolco/proxy/redis"
)

// startRedis starts redis-server on a free port and returns its address.
func startRedis(tb testing.TB) string {
	tb.Helper()
	addr, _ := startRedisProc(tb)
	return addr
}

// startRedisProc starts redis-server on a free port and returns its
// address and its process, for a test that stops it.
func startRedisProc(tb testing.TB) (string, *os.Process) {
	tb.Helper()
	bin := realprog.Binary(tb, "redis-server", "redis-server")
	port := realprog.FreePorts(tb, 1)[0]
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := testproc.Start(cmd); err != nil {
		tb.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	tb.Cleanup(func() { cmd.Process.Kill(); <-exited })
	realprog.WaitListening(tb, "redis-server", []int{port}, exited)
	// A process stopped by a failed test is continued, so that it can
	// be killed and waited for.
	tb.Cleanup(func() { cmd.Process.Signal(syscall.SIGCONT) })
	return fmt.Sprintf("127.0.0.1:%d", port), cmd.Process
}

// conn is a test's connection to a server.
type conn struct {
	tb testing.TB
	c  net.Conn
	w  *bufio.Writer
	rr *redis.ReplyReader
}

func dial(tb testing.TB, addr string) *conn {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return &conn{tb: tb, c: c, w: bufio.NewWriter(c), rr: redis.NewReplyReader(c, redis.ReplyLimits{})}
}

// pipeline sends n commands, 1000 at a time, and reads their replies,
// failing on an error reply.
func (c *conn) pipeline(n int, cmd func(i int) []string) {
	c.tb.Helper()
	for i := range n {
		var args [][]byte
		for _, a := range cmd(i) {
			args = append(args, []byte(a))
		}
		c.w.Write(redis.AppendArgs(nil, args))
		if i%1000 == 999 || i == n-1 {
			if err := c.w.Flush(); err != nil {
				c.tb.Fatal(err)
			}
			for range i%1000 + 1 {
				reply, _, err := c.rr.Read(nil, nil)
				if err != nil || redis.IsError(reply) {
					c.tb.Fatalf("%q, %v", reply, err)
				}
			}
		}
	}
}

// do runs one command and returns its reply.
func (c *conn) do(args ...string) string {
	c.tb.Helper()
	var b [][]byte
	for _, a := range args {
		b = append(b, []byte(a))
	}
	if _, err := c.c.Write(redis.AppendArgs(nil, b)); err != nil {
		c.tb.Fatal(err)
	}
	reply, _, err := c.rr.Read(nil, nil)
	if err != nil {
		c.tb.Fatal(err)
	}
	return strings.TrimSpace(string(reply))
}

// dbsize returns how many keys the server holds.
func (c *conn) dbsize() int {
	c.tb.Helper()
	n, err := strconv.Atoi(strings.TrimPrefix(c.do("DBSIZE"), ":"))
	if err != nil {
		c.tb.Fatal(err)
	}
	return n
}

// dialer returns a Dialer of addr.
func dialer(addr string) Dialer {
	return func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
}

// plan is a Plan for the tests: every key whose dest is not "" goes
// there, at once; it records what it was told.
type plan struct {
	dest    func(key []byte) string
	admits  func(worker int) (bool, <-chan struct{})
	wait    func() error
	timeout int // MIGRATE's, ms
	mu      sync.Mutex
	scanned int
	moved   map[string]int
	bytes   int64
	failed  []error
	// addr maps a dest to the address MIGRATE sends to; the dest itself
	// when absent.
	addr map[string]string
	// src is the source's address, for Big's copies, of chunk elements
	// a piece; big the keys they moved.
	src   string
	chunk int
	big   []string
	// gone are the keys Moved reported off the source.
	gone []string
}

func (p *plan) Dest(key []byte) string { return p.dest(key) }

func (p *plan) Migrate(dst string) ([][]byte, error) {
	to := p.to(dst)
	host, port, err := net.SplitHostPort(to)
	if err != nil {
		return nil, err
	}
	timeout := max(p.timeout, 5000)
	return [][]byte{[]byte("MIGRATE"), []byte(host), []byte(port), nil, []byte("0"), []byte(strconv.Itoa(timeout)), []byte("REPLACE")}, nil
}

// to returns the address dst is reached at.
func (p *plan) to(dst string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.addr[dst]; ok {
		return a
	}
	return dst
}

func (p *plan) Big(ctx context.Context, dst string, key []byte) error {
	c := &Copy{Src: dialer(p.src), Dst: dialer(p.to(dst)), Key: key, Chunk: p.chunk}
	moved, err := c.Run(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	if moved {
		p.big = append(p.big, string(key))
	}
	return err
}

func (p *plan) Admits(worker int) (bool, <-chan struct{}) {
	if p.admits == nil {
		return true, nil
	}
	return p.admits(worker)
}

func (p *plan) Wait(ctx context.Context, worker int) error {
	if p.wait != nil {
		return p.wait()
	}
	return nil
}

func (p *plan) Hold(ctx context.Context, dst string) (func(), error) { return func() {}, nil }

func (p *plan) Scanned(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scanned += n
}

func (p *plan) Moved(dst string, keys [][]byte, bytes int64, took time.Duration) {
	n := len(keys)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range keys {
		p.gone = append(p.gone, string(k))
	}
	if p.moved == nil {
		p.moved = map[string]int{}
	}
	p.moved[dst] += n
	p.bytes += bytes
}

func (p *plan) Failed(dst string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failed = append(p.failed, err)
}
