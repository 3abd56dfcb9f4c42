// Package dnstest runs a DNS server on loopback for tests, answering from
// records the test sets, over UDP and TCP on one port, in the way
// net/http/httptest runs an HTTP server. It is built with
// github.com/miekg/dns; only tests import it.
package dnstest

import (
	"context"
	"net"
	"sync"
	"testing"

	mdns "github.com/miekg/dns"
)

// Server is a DNS server on loopback. Answers larger than a UDP client
// accepts are truncated, so that the client asks again over TCP.
type Server struct {
	// Addr is the server's "127.0.0.1:port", for UDP and TCP.
	Addr string

	mu      sync.Mutex // guards records, rcode and silent
	records map[uint16][]mdns.RR
	rcode   int
	silent  bool
}

// Start starts a server without records; Cleanup stops it.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{records: map[uint16][]mdns.RR{}}
	var pc net.PacketConn
	var l net.Listener
	for attempt := 0; l == nil; attempt++ {
		var err error
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if l, err = net.Listen("tcp", pc.LocalAddr().String()); err != nil {
			pc.Close()
			if attempt == 10 {
				t.Fatalf("no port free for both UDP and TCP: %v", err)
			}
		}
	}
	s.Addr = pc.LocalAddr().String()
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait) // Cleanup runs last in first out: after the shutdowns below
	for _, srv := range []*mdns.Server{{PacketConn: pc, Handler: s}, {Listener: l, Handler: s}} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv.ActivateAndServe()
		}()
		<-started
		t.Cleanup(func() { srv.Shutdown() })
	}
	return s
}

// Resolver returns a resolver that asks this server alone.
func (s *Server) Resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, s.Addr)
	}}
}

// Set replaces the records of a type (mdns.TypeSRV, TypeA, TypeAAAA),
// each in zone file syntax: "_mc._tcp.mc.example. 5 IN SRV 0 50 11211
// mc-0.mc.example.". A name without records of any type does not exist
// (NXDOMAIN). The error is that of a record that does not parse.
func (s *Server) Set(qtype uint16, rrs ...string) error {
	parsed := make([]mdns.RR, len(rrs))
	for i, text := range rrs {
		rr, err := mdns.NewRR(text)
		if err != nil {
			return err
		}
		parsed[i] = rr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[qtype] = parsed
	return nil
}

// Fail makes the server answer every query with rcode (such as
// mdns.RcodeServerFailure), or not at all when silent; Fail(0, false)
// makes it answer again.
func (s *Server) Fail(rcode int, silent bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rcode, s.silent = rcode, silent
}

// ServeDNS answers a query; it implements mdns.Handler.
func (s *Server) ServeDNS(w mdns.ResponseWriter, r *mdns.Msg) {
	s.mu.Lock()
	rcode, silent := s.rcode, s.silent
	var answer []mdns.RR
	if len(r.Question) == 1 {
		for _, rr := range s.records[r.Question[0].Qtype] {
			if mdns.CanonicalName(rr.Header().Name) == mdns.CanonicalName(r.Question[0].Name) {
				answer = append(answer, mdns.Copy(rr))
			}
		}
	}
	known := len(answer) > 0 || len(s.records[mdns.TypeSRV])+len(s.records[mdns.TypeA])+len(s.records[mdns.TypeAAAA]) > 0
	s.mu.Unlock()
	if silent {
		return
	}
	m := new(mdns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	m.Answer = answer
	switch {
	case rcode != 0:
		m.Rcode = rcode
		m.Answer = nil
	case len(answer) == 0 && !known:
		m.Rcode = mdns.RcodeNameError
	}
	if _, udp := w.RemoteAddr().(*net.UDPAddr); udp {
		size := mdns.MinMsgSize
		if opt := r.IsEdns0(); opt != nil {
			size = int(opt.UDPSize())
		}
		m.Truncate(size) // the resolver then asks again over TCP
	}
	w.WriteMsg(m)
}
