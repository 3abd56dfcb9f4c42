package proxy

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
)

// nutcracker's stats fields, with its own descriptions (nutcracker -D),
// in the order it writes them.
var (
	poolFields = []statField{
		{"client_eof", "# eof on client connections"},
		{"client_err", "# errors on client connections"},
		{"client_connections", "# active client connections"},
		{"server_ejects", "# times backend server was ejected"},
		{"forward_error", "# times we encountered a forwarding error"},
		{"fragments", "# fragments created from a multi-vector request"},
	}
	serverFields = []statField{
		{"server_eof", "# eof on server connections"},
		{"server_err", "# errors on server connections"},
		{"server_timedout", "# timeouts on server connections"},
		{"server_connections", "# active server connections"},
		{"server_ejected_at", "timestamp when server was ejected in usec since epoch"},
		{"requests", "# requests"},
		{"request_bytes", "total request bytes"},
		{"responses", "# responses"},
		{"response_bytes", "total response bytes"},
		{"in_queue", "# requests in incoming queue"},
		{"in_queue_bytes", "current request bytes in incoming queue"},
		{"out_queue", "# requests in outgoing queue"},
		{"out_queue_bytes", "current request bytes in outgoing queue"},
	}
)

type statField struct{ name, desc string }

// DescribeStats writes the fields of the stats port's JSON and what each
// means, as nutcracker -D does.
func DescribeStats(w io.Writer) error {
	_, err := io.WriteString(w, describeStats())
	return err
}

func describeStats() string {
	s := "pool stats:\n"
	for _, f := range poolFields {
		s += fmt.Sprintf("  %-20s%q\n", f.name, f.desc)
	}
	s += "\nserver stats:\n"
	for _, f := range serverFields {
		s += fmt.Sprintf("  %-20s%q\n", f.name, f.desc)
	}
	return s
}

// Version returns the proxy's version: the module version it was built
// from (with its VCS revision when known), as the stats port reports it.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}

// statsPort serves nutcracker's stats JSON: a client that connects gets
// the figures as of the last refresh, one JSON document, and the
// connection is closed. The figures are refreshed every interval, as
// nutcracker aggregates them.
type statsPort struct {
	reads    *adminReads
	ln       net.Listener
	tls      *tls.Config // nil: plaintext, as nutcracker
	interval time.Duration
	started  time.Time
	source   string
	version  string
	stop     chan struct{}
	// ready is closed once the figures were first gathered: a client
	// that connects before gets them then, not an empty document.
	ready     chan struct{}
	readyOnce sync.Once

	// mu guards doc.
	mu  sync.Mutex
	doc []byte
}

// startStatsPort listens on addr and serves the stats JSON; it returns
// the port. The caller holds Server.mu.
func (e *sideEndpoints) startStatsPort(addr string, interval time.Duration, tlsCfg *tls.Config) (*statsPort, error) {
	ln, err := e.sockets.listenTCP(addr)
	if err != nil {
		return nil, fmt.Errorf("stats port: %w", err)
	}
	host, _ := os.Hostname()
	sp := &statsPort{reads: e.reads, ln: ln, tls: tlsCfg, interval: interval, started: time.Now(), source: host,
		version: Version(), stop: make(chan struct{}), ready: make(chan struct{})}
	e.wg.Add(2)
	go func() {
		defer e.wg.Done()
		sp.refreshLoop()
	}()
	go func() {
		defer e.wg.Done()
		sp.serve()
	}()
	return sp, nil
}

func (sp *statsPort) refreshLoop() {
	t := time.NewTicker(sp.interval)
	defer t.Stop()
	for {
		sp.refresh()
		select {
		case <-sp.stop:
			return
		case <-t.C:
		}
	}
}

func (sp *statsPort) refresh() {
	doc := sp.json(sp.reads.pools())
	sp.mu.Lock()
	sp.doc = doc
	sp.mu.Unlock()
	sp.readyOnce.Do(func() { close(sp.ready) })
}

func (sp *statsPort) serve() {
	for {
		c, err := sp.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // out of file descriptors: wait, as acceptLoop does
			continue
		}
		select {
		case <-sp.ready:
		case <-sp.stop:
			c.Close()
			return
		}
		sp.mu.Lock()
		doc := sp.doc
		sp.mu.Unlock()
		if sp.tls != nil {
			c = tls.Server(c, sp.tls)
		}
		_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_, _ = c.Write(doc)
		c.Close()
	}
}

func (sp *statsPort) close() {
	close(sp.stop)
	sp.ln.Close()
}

// json returns the figures of pools in nutcracker's JSON: the process's,
// then each pool's with each server's, servers keyed by their name as
// twemproxy names them.
func (sp *statsPort) json(pools []*pool) []byte {
	now := time.Now()
	var total, curr int64
	for _, p := range pools {
		t, c := p.connCounts()
		total += t
		curr += c
	}
	b := []byte{'{'}
	b = jsonString(b, "service", "nutcracker")
	b = jsonString(b, "source", sp.source)
	b = jsonString(b, "version", sp.version)
	b = jsonNumber(b, "uptime", int64(now.Sub(sp.started).Seconds()))
	b = jsonNumber(b, "timestamp", now.Unix())
	b = jsonNumber(b, "total_connections", total)
	b = jsonNumber(b, "curr_connections", curr)
	for _, p := range pools {
		b = p.appendStatsJSON(b)
	}
	b[len(b)-2] = '}' // over the last ", "
	b[len(b)-1] = '\n'
	return b
}

// connCounts returns the pool's connections as nutcracker counts them in
// total_connections and curr_connections: its listener, its clients and
// its server connections.
func (p *pool) connCounts() (total, curr int64) {
	total, curr = 1+p.stats.totalConns.Load(), 1+p.stats.currConns.Load()
	for _, b := range p.backends {
		total += int64(b.stats.dials.Load())
		curr += b.stats.conns.Load()
	}
	return total, curr
}

func (p *pool) appendStatsJSON(b []byte) []byte {
	st := p.stats
	var ejects uint64
	for _, be := range p.backends {
		ejects += be.stats.ejections.Load()
	}
	b = jsonKey(b, p.name)
	b = append(b, '{')
	for i, v := range []uint64{st.clientEOF.Load(), st.clientErr.Load(), uint64(max(st.currConns.Load(), 0)),
		ejects, st.forwardErrors.Load(), st.fragments.Load()} {
		b = jsonNumber(b, poolFields[i].name, int64(v))
	}
	for _, be := range p.backends {
		b = be.appendStatsJSON(b)
	}
	b[len(b)-2] = '}'
	b[len(b)-1] = ','
	return append(b, ' ')
}

func (be *backend) appendStatsJSON(b []byte) []byte {
	st := be.stats
	q := be.queues()
	b = jsonKey(b, be.name())
	b = append(b, '{')
	// A request with noreply counts as nutcracker forwards it: with
	// " noreply", which the proxy leaves out to get the reply it reads for
	// itself, and with no response (see op.unsaid). The metrics count the
	// bytes the wire carries. The unsaid figures are loaded first: a reply
	// is counted in them after the totals, so the differences never wrap.
	unsaid, unsaidBytes := st.unsaid.Load(), st.unsaidBytes.Load()
	reqBytes := st.requestBytes.Load() + unsaid*uint64(len(" noreply"))
	responses, respBytes := st.responses.Load()-unsaid, st.responseBytes.Load()-unsaidBytes
	for i, v := range []int64{int64(st.eof.Load()), int64(st.err.Load()), int64(st.timedout.Load()), st.conns.Load(),
		st.ejectedAt.Load(), int64(st.requests.Load()), int64(reqBytes),
		int64(responses), int64(respBytes),
		q.in, q.inBytes, q.out, q.outBytes} {
		b = jsonNumber(b, serverFields[i].name, v)
	}
	b[len(b)-2] = '}'
	b[len(b)-1] = ','
	return append(b, ' ')
}

// queueFigures are the requests to a server not yet written (in) and
// written but not answered (out), and their bytes.
type queueFigures struct{ in, inBytes, out, outBytes int64 }

// queues counts the requests on their way to the server now.
func (be *backend) queues() queueFigures {
	var q queueFigures
	for _, c := range be.conns {
		c.mu.Lock()
		if s := c.s; s != nil {
			in := s.bufOps + s.writing
			q.in += int64(in)
			q.inBytes += int64(len(s.buf) + s.writingBytes)
			for _, in := range s.ins {
				q.inBytes += int64(len(in.data))
			}
			s.qmu.Lock()
			waiting := s.queue[s.head:]
			for _, o := range waiting[:max(len(waiting)-in, 0)] {
				q.out++
				q.outBytes += int64(o.size())
			}
			s.qmu.Unlock()
		}
		c.mu.Unlock()
	}
	return q
}

func jsonKey(b []byte, key string) []byte {
	k, _ := json.Marshal(key) // a string always marshals
	b = append(b, k...)
	return append(b, ':')
}

func jsonString(b []byte, key, v string) []byte {
	b = jsonKey(b, key)
	s, _ := json.Marshal(v)
	b = append(b, s...)
	return append(b, ", "...)
}

func jsonNumber(b []byte, key string, v int64) []byte {
	b = jsonKey(b, key)
	b = strconv.AppendInt(b, v, 10)
	return append(b, ", "...)
}
