package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// refusedAddr returns a loopback address that refuses connections.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestErrorReply derives the line a client reads from each kind of
// failure: nutcracker's words for it (see TestErrorRepliesAsNutcracker for
// the real program's), never the server's address.
func TestErrorReply(t *testing.T) {
	addr := refusedAddr(t)
	_, dialErr := net.DialTimeout("tcp", addr, time.Second)
	if dialErr == nil {
		t.Fatalf("%s accepted a connection", addr)
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
		is   error
	}{
		{"connect refused", serverError(addr, "connect", dialErr), "SERVER_ERROR Connection refused\r\n", syscall.ECONNREFUSED},
		{"connect timeout", serverError(addr, "connect", &net.OpError{Op: "dial", Err: timeoutError{}}), "SERVER_ERROR Connection timed out\r\n", ErrTimeout},
		{"read timeout", serverError(addr, "", timeoutError{}), "SERVER_ERROR Connection timed out\r\n", ErrTimeout},
		{"closed by the server", serverError(addr, "", io.EOF), "SERVER_ERROR unknown\r\n", io.EOF},
		{"reset", serverError(addr, "", &net.OpError{Op: "read", Err: syscall.ECONNRESET}), "SERVER_ERROR Connection reset by peer\r\n", syscall.ECONNRESET},
		{"unresolved", serverError(addr, "connect", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "mc-9"}}), "SERVER_ERROR Host is down\r\n", nil},
		{"down", &ServerError{Addr: addr, Err: ErrServerDown}, "SERVER_ERROR Connection refused\r\n", ErrServerDown},
		{"connection lost", &ServerError{Addr: addr, Err: ErrConnLost}, "SERVER_ERROR unknown\r\n", ErrConnLost},
		{"closed by the proxy", serverError(addr, "", &net.OpError{Op: "raw-read", Net: "tcp", Source: tcpAddr(addr), Addr: tcpAddr(addr), Err: net.ErrClosed}), "SERVER_ERROR unknown\r\n", net.ErrClosed},
		{"network error of no number", serverError(addr, "", &net.OpError{Op: "write", Net: "tcp", Addr: tcpAddr(addr), Err: errors.New("broken somehow")}), "SERVER_ERROR unknown\r\n", nil},
		{"TLS", serverError(addr, "connect", fmt.Errorf("%w: %w", errTLSHandshake, errors.New("x509: certificate is valid for 10.0.0.1, not kv-3.example"))), "SERVER_ERROR TLS handshake failed\r\n", nil},
		{"value too large", serverError(addr, "", fmt.Errorf("%w: 9 bytes", memcache.ErrValueTooLarge)), "SERVER_ERROR value too large for the proxy: 9 bytes\r\n", memcache.ErrValueTooLarge},
		{"no servers", ErrNoServers, "SERVER_ERROR Connection refused\r\n", ErrNoServers},
		{"pool closed", ErrPoolClosed, "SERVER_ERROR pool closed\r\n", ErrPoolClosed},
		{"stats args", fmt.Errorf("%w %s", ErrStatsArgs, "items"), "SERVER_ERROR the proxy answers stats (its own figures) only; ask the servers for stats items\r\n", ErrStatsArgs},
		{"client error", &memcache.Error{Err: memcache.ErrBadCommand, Reply: "CLIENT_ERROR bad command line format\r\n"}, "CLIENT_ERROR bad command line format\r\n", memcache.ErrBadCommand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(appendErrorReply(nil, tc.err)); got != tc.want {
				t.Errorf("reply %q, want %q", got, tc.want)
			}
			redisWant := "-ERR " + strings.TrimPrefix(tc.want, "SERVER_ERROR ")
			if got := string(appendRedisError(nil, tc.err)); got != redisWant && !strings.HasPrefix(tc.want, "CLIENT_ERROR") {
				t.Errorf("Redis reply %q, want %q", got, redisWant)
			}
			if tc.is != nil && !errors.Is(tc.err, tc.is) {
				t.Errorf("%v does not wrap %v", tc.err, tc.is)
			}
			var se *ServerError
			if errors.As(tc.err, &se) && strings.Count(tc.err.Error(), se.Addr) != 1 {
				t.Errorf("%q names the server more than once", tc.err.Error())
			}
			if reply := string(appendRedisError(nil, tc.err)); strings.Contains(reply, addr) || strings.Contains(reply, "tcp ") {
				t.Errorf("the reply %q names the server or the network", reply)
			}
		})
	}
}

// tcpAddr returns addr as a TCP address.
func tcpAddr(addr string) *net.TCPAddr {
	a, _ := net.ResolveTCPAddr("tcp", addr)
	return a
}

// timeoutError is a network error that timed out.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// TestErrorRepliesAsNutcracker runs the real nutcracker and the proxy in
// front of the same failing servers - one refusing connections, one that
// never answers, one that closes the connection on a request, one that
// resets it - memcached and Redis pools alike, and requires the same
// replies, word for word, none naming a server's address.
func TestErrorRepliesAsNutcracker(t *testing.T) {
	t.Parallel()
	needBinary(t, "nutcracker")
	refused := refusedAddr(t)
	stalled := fakeServer(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
	closing := fakeServer(t, func(c net.Conn) {
		_, _ = c.Read(make([]byte, 512))
		c.Close()
	})
	resetting := fakeServer(t, func(c net.Conn) {
		_, _ = c.Read(make([]byte, 512))
		_ = c.(*net.TCPConn).SetLinger(0)
		c.Close()
	})
	servers := []struct{ name, addr string }{{"refused", refused}, {"stalled", stalled}, {"closing", closing}, {"resetting", resetting}}
	var ncConf, kConf strings.Builder
	ncListen := map[string]string{}
	for _, srv := range servers {
		for _, redis := range []bool{false, true} {
			name := srv.name + map[bool]string{false: "_mc", true: "_redis"}[redis]
			// A short timeout, so that the stalled server's requests time
			// out soon; the same settings for both.
			settings := fmt.Sprintf("  timeout: 300\n  redis: %v\n  servers:\n   - %s:1\n", redis, srv.addr)
			ncListen[name] = fmt.Sprintf("127.0.0.1:%d", freePort(t))
			fmt.Fprintf(&ncConf, "%s:\n  listen: %s\n%s", name, ncListen[name], settings)
			fmt.Fprintf(&kConf, "%s:\n  listen: 127.0.0.1:%d\n%s", name, freePort(t), settings)
		}
	}
	first := servers[0].name + "_mc"
	startNutcracker(t, ncConf.String(), ncListen[first])
	for name, addr := range ncListen {
		if name != first {
			waitListening(t, addr)
		}
	}
	s := startProxy(t, kConf.String())
	requests := map[bool][]string{
		false: {"get k\r\n", "set k 0 0 1\r\nx\r\n"},
		true:  {"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"},
	}
	for _, srv := range servers {
		for _, redis := range []bool{false, true} {
			name := srv.name + map[bool]string{false: "_mc", true: "_redis"}[redis]
			for _, req := range requests[redis] {
				t.Run(fmt.Sprintf("%s %.3s", name, strings.TrimLeft(req, "*23\r\n$")), func(t *testing.T) {
					nc := oneReply(t, ncListen[name], req)
					k := oneReply(t, s.Addr(name).String(), req)
					if k != nc {
						t.Errorf("kolco %q, nutcracker %q", k, nc)
					}
					if !strings.HasPrefix(nc, "SERVER_ERROR ") && !strings.HasPrefix(nc, "-ERR ") {
						t.Errorf("nutcracker answered %q: not an error reply", nc)
					}
					if _, port, _ := net.SplitHostPort(srv.addr); strings.Contains(k, port) {
						t.Errorf("kolco's reply %q names the server", k)
					}
				})
			}
		}
	}
}

// oneReply sends req on a new connection to addr and returns the first
// line of the reply.
func oneReply(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("%s: %v (read %q)", addr, err, line)
	}
	return line
}

// TestSharedFailedConnectCountsEveryRequest: when many senders wait for
// one connect that fails, each of their requests is one of the server's
// errors, in the stats reply and in kolco_proxy_server_errors_total.
func TestSharedFailedConnectCountsEveryRequest(t *testing.T) {
	addr := refusedAddr(t)
	s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n  timeout: 10000\n  servers:\n   - "+addr+":1\n")
	const clients, each = 40, 100
	done := make(chan int, clients)
	for range clients {
		c := dial(t, s.Addr("p").String())
		go func() {
			c.send(strings.Repeat("get k\r\n", each))
			n := 0
			for range each {
				b, _, err := c.rr.Read(nil, memcache.CmdGet, nil)
				if err == nil && strings.HasPrefix(string(b), "SERVER_ERROR ") {
					n++
				}
			}
			done <- n
		}()
	}
	replies := 0
	for range clients {
		replies += <-done
	}
	if replies != clients*each {
		t.Fatalf("%d SERVER_ERROR replies, want %d", replies, clients*each)
	}
	b := s.testPool("p").backends[0]
	if n := b.stats.errors.Load(); n != uint64(replies) {
		t.Errorf("server errors counted %d for %d SERVER_ERROR replies", n, replies)
	}
	if got := metricValue(t, s, "kolco_proxy_server_errors_total", serverLabel(addr, addr)); got != float64(replies) {
		t.Errorf("kolco_proxy_server_errors_total %v for %d SERVER_ERROR replies", got, replies)
	}
	want := fmt.Sprintf("STAT server:%s:errors %d\r\n", addr, replies) // unnamed off port 11211: named host:port
	if got := dial(t, s.Addr("p").String()).do("stats proxy\r\n"); !strings.Contains(got, want) {
		t.Errorf("stats proxy lacks %q:\n%s", want, got)
	}
}

// TestTryAgainNamesNoServer: a request whose key could not move is
// answered -TRYAGAIN with the proxy's words, not the servers' addresses
// and errors.
func TestTryAgainNamesNoServer(t *testing.T) {
	failed := fmt.Errorf("%w: moving the key from %s to %s: %w", errMoveFailed, "127.0.0.1:7001", "127.0.0.1:7002",
		&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET})
	for _, err := range []error{failed, errMoveClosed} {
		got := tryAgainCause(err)
		if strings.Contains(got, "127.0.0.1") || strings.Contains(got, "tcp") || got == "" {
			t.Errorf("TRYAGAIN %s", got)
		}
	}
}
