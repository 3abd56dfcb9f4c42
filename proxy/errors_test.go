package proxy

import (
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
// failure: the server's address once, the cause once, no package prefix.
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
		{"connect refused", serverError(addr, "connect", dialErr), "SERVER_ERROR " + addr + ": connect: connection refused\r\n", syscall.ECONNREFUSED},
		{"connect timeout", serverError(addr, "connect", &net.OpError{Op: "dial", Err: timeoutError{}}), "SERVER_ERROR " + addr + ": connect: timeout\r\n", ErrTimeout},
		{"read timeout", serverError(addr, "", timeoutError{}), "SERVER_ERROR " + addr + ": timeout\r\n", ErrTimeout},
		{"closed by the server", serverError(addr, "", io.EOF), "SERVER_ERROR " + addr + ": EOF\r\n", io.EOF},
		{"reset", serverError(addr, "", &net.OpError{Op: "read", Err: syscall.ECONNRESET}), "SERVER_ERROR " + addr + ": connection reset by peer\r\n", syscall.ECONNRESET},
		{"down", &ServerError{Addr: addr, Err: ErrServerDown}, "SERVER_ERROR " + addr + ": server down\r\n", ErrServerDown},
		{"connection lost", &ServerError{Addr: addr, Err: ErrConnLost}, "SERVER_ERROR " + addr + ": connection lost\r\n", ErrConnLost},
		{"value too large", serverError(addr, "", fmt.Errorf("%w: 9 bytes", memcache.ErrValueTooLarge)), "SERVER_ERROR " + addr + ": value too large for the proxy: 9 bytes\r\n", memcache.ErrValueTooLarge},
		{"no servers", ErrNoServers, "SERVER_ERROR no live servers\r\n", ErrNoServers},
		{"pool closed", ErrPoolClosed, "SERVER_ERROR pool closed\r\n", ErrPoolClosed},
		{"stats args", fmt.Errorf("%w %s", ErrStatsArgs, "items"), "SERVER_ERROR the proxy answers stats (its own figures) only; ask the servers for stats items\r\n", ErrStatsArgs},
		{"client error", &memcache.Error{Err: memcache.ErrBadCommand, Reply: "CLIENT_ERROR bad command line format\r\n"}, "CLIENT_ERROR bad command line format\r\n", memcache.ErrBadCommand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(appendErrorReply(nil, tc.err)); got != tc.want {
				t.Errorf("reply %q, want %q", got, tc.want)
			}
			if !errors.Is(tc.err, tc.is) {
				t.Errorf("%v does not wrap %v", tc.err, tc.is)
			}
			var se *ServerError
			if errors.As(tc.err, &se) && strings.Count(tc.err.Error(), se.Addr) != 1 {
				t.Errorf("%q names the server more than once", tc.err.Error())
			}
		})
	}
}

// timeoutError is a network error that timed out.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// TestRefusedServerReply: a request for a server that refuses connections
// reads its address once and the cause once.
func TestRefusedServerReply(t *testing.T) {
	addr := refusedAddr(t)
	s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n  timeout: 10000\n  servers:\n   - "+addr+":1\n")
	want := "SERVER_ERROR " + addr + ": connect: connection refused\r\n"
	if got := dial(t, s.Addr("p").String()).do("get k\r\n"); got != want {
		t.Fatalf("get on a refusing server: %q, want %q", got, want)
	}
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
