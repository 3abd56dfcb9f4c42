package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// startRedisServer starts a real redis-server on a free loopback port and
// returns its address; Cleanup stops it.
func startRedisServer(t *testing.T) string {
	t.Helper()
	bin := realprog.Binary(t, "redis-server", "redis-server")
	st := realprog.StartOwned(t, "redis-server", bin, func(port int) []string {
		return []string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--logfile", "", "--dir", t.TempDir()}
	}, realprog.RedisPID)
	return fmt.Sprintf("127.0.0.1:%d", st.Port)
}

// longClient is a client on one connection for the whole of a test, as
// pymemcache, redis-py and go-redis pools keep theirs: it sends a request,
// or a pipeline of depth requests, and reads every reply, over and over; a
// failed request or a closed connection ends it.
type longClient struct {
	proto string
	depth int
	conn  net.Conn
	r     *bufio.Reader
	n     int // requests sent
	ok    atomic.Int64
	err   error // what ended it, if not the test
}

func (c *longClient) run(stop <-chan struct{}, deadline time.Time) {
	for time.Now().Before(deadline) {
		select {
		case <-stop:
			return
		default:
		}
		if c.err = c.round(); c.err != nil {
			return
		}
	}
}

// round sends depth requests at once and checks each reply.
func (c *longClient) round() error {
	_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	keys := make([]string, c.depth)
	for i := range keys {
		c.n++
		keys[i] = fmt.Sprintf("long:%p:%d", c, c.n%50)
		v := strconv.Itoa(c.n)
		if c.proto == "redis" {
			fmt.Fprintf(&b, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(keys[i]), keys[i], len(v), v)
		} else {
			fmt.Fprintf(&b, "set %s 0 0 %d\r\n%s\r\n", keys[i], len(v), v)
		}
	}
	if _, err := c.conn.Write([]byte(b.String())); err != nil {
		return err
	}
	want := "STORED\r\n"
	if c.proto == "redis" {
		want = "+OK\r\n"
	}
	for range keys {
		line, err := c.r.ReadString('\n')
		if err != nil {
			return err
		}
		if line != want {
			return fmt.Errorf("reply %q", line)
		}
		c.ok.Add(1)
	}
	return nil
}

// TestProxyHandoverKeepsClients: three SIGUSR2 handovers, one after the
// other, under twelve closed-loop clients that each keep one connection -
// memcached and Redis, plain and pipelined 20 deep: every request of every
// client is answered and no connection is closed, since each client's
// connection is handed to the new process at a request boundary with what
// it sent and the old one had not read.
func TestProxyHandoverKeepsClients(t *testing.T) {
	mcServer, redisServer := startMemcached(t), startRedisServer(t)
	ports := realprog.FreePorts(t, 2)
	dir := t.TempDir()
	conf, pidPath := filepath.Join(dir, "nutcracker.yml"), filepath.Join(dir, "kolco.pid")
	y := fmt.Sprintf("mc:\n  listen: 127.0.0.1:%d\n  timeout: 10000\n  servers: [\"%s:1\"]\n"+
		"rd:\n  listen: 127.0.0.1:%d\n  redis: true\n  timeout: 10000\n  servers: [\"%s:1\"]\n", ports[0], mcServer, ports[1], redisServer)
	if err := os.WriteFile(conf, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	first := program(t, "kolco", "proxy", "-c", conf, "-p", pidPath, "-o", filepath.Join(dir, "kolco.log"))
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	firstDone := make(chan struct{})
	go func() { _ = first.Wait(); close(firstDone) }()
	t.Cleanup(func() { _ = first.Process.Kill(); <-firstDone })
	realprog.WaitListening(t, "kolco proxy", ports, firstDone)

	var clients []*longClient
	for _, proto := range []string{"memcached", "redis"} {
		for _, depth := range []int{1, 1, 1, 20, 20, 20} {
			port := ports[0]
			if proto == "redis" {
				port = ports[1]
			}
			conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			clients = append(clients, &longClient{proto: proto, depth: depth, conn: conn, r: bufio.NewReader(conn)})
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.run(stop, time.Now().Add(90*time.Second))
		}()
	}
	answered := func() (n int64) {
		for _, c := range clients {
			n += c.ok.Load()
		}
		return n
	}
	pid := first.Process.Pid
	for range 3 {
		before := answered()
		eventually(t, "requests answered before the handover", func() bool { return answered() >= before+500 })
		if err := testproc.KillOwn(pid, syscall.SIGUSR2); err != nil {
			t.Fatal(err)
		}
		old := pid
		eventually(t, "a new process in the pid file, the old one gone", func() bool {
			b, _ := os.ReadFile(pidPath)
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			return pid != 0 && pid != old && testproc.Gone(old)
		})
	}
	t.Cleanup(func() {
		_ = testproc.KillOwn(pid, syscall.SIGTERM)
		eventually(t, "the last process gone", func() bool { return testproc.Gone(pid) })
	})
	after := answered()
	eventually(t, "requests answered by the last process", func() bool { return answered() >= after+500 })
	close(stop)
	wg.Wait()
	for i, c := range clients {
		if c.err != nil {
			t.Errorf("client %d (%s, %d deep): %v after %d answered", i, c.proto, c.depth, c.err, c.ok.Load())
		}
	}
	t.Logf("%d requests answered across 3 handovers, on %d connections kept throughout", answered(), len(clients))
}

// TestProxyHandoverKeepsConnectionState: a Redis client keeps across a
// SIGUSR2 handover what its connection commands set - the protocol HELLO 3
// chose, its authentication, its name - since its connection is handed to
// the new process with it: after the handover its replies are RESP3 and
// its requests need no AUTH again. A client that did not authenticate is
// still refused, and one that stayed on RESP2 still gets RESP2; a RESP3
// client of a pool without a password stays RESP3.
func TestProxyHandoverKeepsConnectionState(t *testing.T) {
	redisServer := startRedisServer(t)
	ports := realprog.FreePorts(t, 2)
	addr, open := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])
	p := startPidProxy(t, fmt.Sprintf("rd:\n  listen: %s\n  redis: true\n  redis_client_auth: secret\n  timeout: 10000\n  servers: [\"%s:1\"]\n"+
		"open:\n  listen: %s\n  redis: true\n  timeout: 10000\n  servers: [\"%s:1\"]\n", addr, redisServer, open, redisServer), ports...)
	resp3, resp2, none, openResp3 := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, open)
	// HELLO's reply is a map of many lines: read up to PING's reply.
	hello := func(c *rawRedis, hello string) {
		t.Helper()
		if _, err := c.c.Write([]byte(hello + "*1\r\n$4\r\nPING\r\n")); err != nil {
			t.Fatal(err)
		}
		for line := ""; line != "+PONG\r\n"; {
			var err error
			if line, err = c.r.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
		}
	}
	hello(resp3, "*5\r\n$5\r\nHELLO\r\n$1\r\n3\r\n$4\r\nAUTH\r\n$7\r\ndefault\r\n$6\r\nsecret\r\n")
	hello(openResp3, "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n")
	if got := resp3.do("CLIENT", "SETNAME", "c3"); got != "+OK\r\n" {
		t.Fatalf("CLIENT SETNAME: %q", got)
	}
	if got := resp2.do("AUTH", "secret"); got != "+OK\r\n" {
		t.Fatalf("AUTH: %q", got)
	}
	check := func(when string) {
		t.Helper()
		for _, c := range []struct {
			name string
			conn *rawRedis
			args []string
			want string
		}{
			{"RESP3", resp3, []string{"GET", "missing"}, "_\r\n"},
			{"RESP3", resp3, []string{"CLIENT", "GETNAME"}, "$2\r\n"},
			{"RESP2", resp2, []string{"GET", "missing"}, "$-1\r\n"},
			{"passwordless pool's RESP3", openResp3, []string{"GET", "missing"}, "_\r\n"},
		} {
			if got, err := c.conn.tryDo(c.args...); got != c.want {
				t.Errorf("%s, the %s client's %v: %q, want %q (%v)", when, c.name, c.args, got, c.want, err)
				continue
			}
			if c.want == "$2\r\n" {
				if name, _ := c.conn.r.ReadString('\n'); name != "c3\r\n" {
					t.Errorf("%s, the %s client's name: %q", when, c.name, name)
				}
			}
		}
		if got, err := none.tryDo("GET", "missing"); !strings.HasPrefix(got, "-NOAUTH") {
			t.Errorf("%s, a client that did not authenticate: %q, want -NOAUTH (%v)", when, got, err)
		}
	}
	check("before the handover")
	old := readPid(p.pid)
	if err := testproc.KillOwn(old, syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a new process in the pid file, the old one gone", func() bool {
		pid := readPid(p.pid)
		return pid != 0 && pid != old && testproc.Gone(old)
	})
	check("after the handover")
}
