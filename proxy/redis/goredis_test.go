package redis

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// miniProxy serves clients with this package over one redis-server: local
// commands answered, AUTH required, others forwarded through a Splitter,
// refusals answered. It is the smallest proxy that shows what a real
// client makes of the package's replies.
type miniProxy struct {
	ln       net.Listener
	backend  string
	password string
	accepted atomic.Int32
	hellos   atomic.Int32 // HELLO requests seen
	setinfos atomic.Int32 // CLIENT SETINFO requests seen
	wg       sync.WaitGroup
}

func startMiniProxy(t *testing.T, backend, password string) *miniProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &miniProxy{ln: ln, backend: backend, password: password}
	var mu sync.Mutex
	var conns []net.Conn
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.accepted.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				defer c.Close()
				p.serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *miniProxy) serve(c net.Conn) {
	b, err := net.Dial("tcp", p.backend)
	if err != nil {
		return
	}
	defer b.Close()
	rr := NewReplyReader(b, ReplyLimits{})
	r := NewReader(c, Limits{Unauthenticated: true})
	authed := false
	var req Request
	var s Splitter
	var out []byte
	for {
		err := r.Read(&req)
		var e *Error
		out = out[:0]
		if err == nil {
			p.count(&req)
		}
		switch {
		case errors.As(err, &e):
			out = append(out, e.Reply...)
		case err != nil:
			return
		case req.Cmd.Name() == "auth":
			out, authed = AppendAuth(out, &req, p.password)
			if authed {
				r.SetLimits(Limits{})
			}
		case req.Cmd.Class() == ClassLocal:
			var closing bool
			out, closing = AppendLocal(out, &req)
			if closing {
				_, _ = c.Write(out)
				return
			}
		case !authed:
			out = append(out, NoAuth...)
		default:
			out = p.forward(out, &req, &s, b, rr)
		}
		if _, err := c.Write(out); err != nil || (e != nil && e.Close) {
			return
		}
	}
}

func (p *miniProxy) count(req *Request) {
	switch {
	case req.Cmd.Name() == "hello":
		p.hellos.Add(1)
	case req.Cmd.Name() == "client" && len(req.Args) > 1 && strings.EqualFold(string(req.Args[1]), "setinfo"):
		p.setinfos.Add(1)
	}
}

// forward sends a request's parts to the one backend and merges the
// replies.
func (p *miniProxy) forward(out []byte, req *Request, s *Splitter, b net.Conn, rr *ReplyReader) []byte {
	var e *Error
	if err := s.Split(req, func([]byte) int { return 0 }); errors.As(err, &e) {
		return append(out, e.Reply...)
	}
	var replies []Reply
	for i := range s.Parts() {
		if _, err := b.Write(s.AppendPart(nil, i)); err != nil {
			return AppendError(out, "ERR backend: "+err.Error())
		}
		data, elems, err := rr.Read(nil, nil)
		if err != nil {
			return AppendError(out, "ERR backend: "+err.Error())
		}
		replies = append(replies, Reply{Data: data, Elems: elems})
	}
	out, err := s.Merge(out, replies)
	if err != nil {
		return AppendError(out, "ERR "+err.Error())
	}
	return out
}

// TestGoRedisThroughPackage runs go-redis v9, which asks for RESP3 with
// HELLO 3 and sends CLIENT SETINFO, against the mini proxy: it must fall
// back to RESP2 and AUTH, take the refusals as errors, and keep its one
// connection.
func TestGoRedisThroughPackage(t *testing.T) {
	srv := startServer(t)
	p := startMiniProxy(t, srv.addr, "pw")
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: p.ln.Addr().String(), Password: "pw", PoolSize: 1})
	defer c.Close()
	if got, err := c.Ping(ctx).Result(); err != nil || got != "PONG" {
		t.Fatalf("PING: %q, %v", got, err)
	}
	if err := c.MSet(ctx, "a", "1", "b", "2").Err(); err != nil {
		t.Fatalf("MSET: %v", err)
	}
	if got, err := c.MGet(ctx, "a", "nope", "b").Result(); err != nil || len(got) != 3 || got[0] != "1" || got[1] != nil || got[2] != "2" {
		t.Fatalf("MGET: %v, %v", got, err)
	}
	if got, err := c.Echo(ctx, "hi").Result(); err != nil || got != "hi" {
		t.Fatalf("ECHO: %q, %v", got, err)
	}
	if err := c.Do(ctx, "MULTI").Err(); err == nil || !strings.Contains(err.Error(), "not supported by the proxy") {
		t.Fatalf("MULTI: %v, want the proxy's refusal", err)
	}
	if err := c.Do(ctx, "SELECT", "2").Err(); err == nil {
		t.Fatal("SELECT 2 succeeded")
	}
	if got, err := c.Del(ctx, "a", "b", "nope").Result(); err != nil || got != 2 {
		t.Fatalf("DEL: %d, %v", got, err)
	}
	if p.hellos.Load() == 0 || p.setinfos.Load() == 0 {
		t.Errorf("HELLO seen %d times, CLIENT SETINFO %d: the client did not ask what the test is about",
			p.hellos.Load(), p.setinfos.Load())
	}
	if n := p.accepted.Load(); n != 1 {
		t.Errorf("the client opened %d connections; errors must not cost it its connection", n)
	}
}
