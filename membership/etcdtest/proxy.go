package etcdtest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// Proxy forwards TCP connections from a loopback port to a server, and
// can cut them: a client that reaches etcd through it is partitioned from
// the store while other clients still write to it.
type Proxy struct {
	// Endpoint is the client URL to give the partitioned client.
	Endpoint string

	target string
	l      net.Listener
	wg     sync.WaitGroup // the accept loop and the copiers

	mu    sync.Mutex // guards cut and conns
	cut   bool
	conns map[net.Conn]struct{}
}

// NewProxy starts a proxy to the server s; Cleanup stops it.
func NewProxy(t testing.TB, s *Server) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	scheme, target, _ := strings.Cut(s.Endpoint, "://")
	p := &Proxy{Endpoint: scheme + "://" + l.Addr().String(), target: target, l: l, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		l.Close()
		p.Cut()
		p.wg.Wait()
	})
	return p
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return // the listener is closed
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			up.Close()
			continue
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.wg.Add(2)
		p.mu.Unlock()
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

// pipe copies from src to dst until either side closes, then closes both.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// Cut closes every forwarded connection and refuses new ones until
// Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
}

// Restore forwards connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}
