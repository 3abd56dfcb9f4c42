package proxy

import (
	"bufio"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// gate is a relay in front of a server that holds the server's replies
// while it is shut, and reports each command line it passes on, so that a
// test can put a request at a chosen point between others.
type gate struct {
	addr string
	mu   sync.Mutex
	cond *sync.Cond
	shut bool
	seen chan string // command lines passed on to the server
}

// startGate relays 127.0.0.1:<port> to the server at upstream until the
// test ends.
func startGate(t *testing.T, upstream string) *gate {
	g := &gate{seen: make(chan string, 1024)}
	g.cond = sync.NewCond(&g.mu)
	g.addr = fakeServer(t, func(c net.Conn) {
		up, err := net.Dial("tcp", upstream)
		if err != nil {
			c.Close()
			return
		}
		t.Cleanup(func() { up.Close() })
		go g.down(up, c)
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if len(line) > 0 {
				if _, werr := io.WriteString(up, line); werr != nil {
					return
				}
				if f := strings.Fields(line); len(f) > 1 && (f[0] == "mg" || f[0] == "md" || f[0] == "ms") {
					select {
					case g.seen <- f[0] + " " + f[1]:
					default:
					}
				}
			}
			if err != nil {
				up.Close()
				return
			}
		}
	})
	return g
}

// down copies the server's replies to the client, waiting while shut.
func (g *gate) down(up, c net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		n, err := up.Read(buf)
		g.mu.Lock()
		for g.shut {
			g.cond.Wait()
		}
		g.mu.Unlock()
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			c.Close()
			return
		}
	}
}

// hold shuts the gate (true) or opens it.
func (g *gate) hold(shut bool) {
	g.mu.Lock()
	g.shut = shut
	g.mu.Unlock()
	g.cond.Broadcast()
}

// await waits until the gate has passed on the command line want ("mg
// key"), dropping the others.
func (g *gate) await(t *testing.T, want string) {
	t.Helper()
	for line := range g.seen {
		if line == want {
			return
		}
	}
}
