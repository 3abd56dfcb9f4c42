package dns_test

import (
	"context"
	"net"
	"sync"
	"testing"

	mdns "github.com/miekg/dns"
)

// server is a DNS server on loopback, UDP and TCP on one port, answering
// from records the test sets.
type server struct {
	addr string

	mu      sync.Mutex // guards records, rcode and silent
	records map[uint16][]mdns.RR
	rcode   int
	silent  bool
}

// startServer starts a server; Cleanup stops it.
func startServer(t *testing.T) *server {
	t.Helper()
	s := &server{records: map[uint16][]mdns.RR{}}
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
	s.addr = pc.LocalAddr().String()
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

// resolver returns a resolver that asks this server alone.
func (s *server) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, s.addr)
	}}
}

// set replaces the records of a type; with none, the name does not exist.
func (s *server) set(qtype uint16, rrs ...string) {
	parsed := make([]mdns.RR, len(rrs))
	for i, text := range rrs {
		rr, err := mdns.NewRR(text)
		if err != nil {
			panic(err)
		}
		parsed[i] = rr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[qtype] = parsed
}

// fail makes the server answer SERVFAIL (rcode) or nothing at all (silent).
func (s *server) fail(rcode int, silent bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rcode, s.silent = rcode, silent
}

func (s *server) ServeDNS(w mdns.ResponseWriter, r *mdns.Msg) {
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
