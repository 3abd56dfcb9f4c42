package proxy

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// serverStats are one server's figures, for the stats command, the stats
// port and the metrics. They survive a reload that keeps the server (same
// name, same address). Each is written where it is cheapest: requests and
// their bytes once per write to the server, replies by the connection's
// reader, which alone writes those; the hot path touches no label and
// allocates nothing.
type serverStats struct {
	requests, requestBytes   atomic.Uint64 // sent
	responses, responseBytes atomic.Uint64 // received
	hits, misses             atomic.Uint64 // keys of get, gets, gat, gats, mg
	errors                   atomic.Uint64 // requests failed at the server
	ejections, restores      atomic.Uint64
	ejectedAt                atomic.Int64 // unix microseconds of the last ejection
	// Connections ended by the server (eof), by an error, or by a
	// timeout; opened now, and ever dialled.
	eof, err, timedout atomic.Uint64
	conns              atomic.Int64
	dials              atomic.Uint64
	// latency observes the time from a request's dispatch to the server's
	// reply.
	latency prometheus.Observer
}

func newServerStats(m *metrics, pool string, b *backend) *serverStats {
	return &serverStats{latency: m.serverLatency.WithLabelValues(pool, b.spec.RingName(), b.addr)}
}

// failed counts n failed requests.
func (s *serverStats) failed(n int) { s.errors.Add(uint64(n)) }

// ejected counts the server marked down.
func (s *serverStats) ejected() {
	s.ejections.Add(1)
	s.ejectedAt.Store(time.Now().UnixMicro())
}

// sent counts n requests of size bytes written to the server.
func (s *serverStats) sent(n, size int) {
	s.requests.Add(uint64(n))
	s.requestBytes.Add(uint64(size))
}

// answered counts the reply to o, read by the connection's reader, which
// began to arrive at now.
func (s *serverStats) answered(o *op, now time.Time, timeout time.Duration) {
	s.responses.Add(1)
	s.responseBytes.Add(uint64(len(o.reply)))
	switch {
	case o.cmd.IsRetrieval():
		s.hits.Add(uint64(len(o.spans)))
		s.misses.Add(uint64(max(o.keys-len(o.spans), 0)))
	case o.cmd == memcache.CmdMetaGet && len(o.reply) >= 2:
		if o.reply[0] == 'E' && o.reply[1] == 'N' {
			s.misses.Add(1)
		} else if o.reply[0] == 'V' || o.reply[0] == 'H' {
			s.hits.Add(1)
		}
	}
	s.latency.Observe(now.Sub(o.deadline.Add(-timeout)).Seconds())
}

// closed counts a connection the server ended or failed: cleanly (EOF),
// by timing out, or by any other error, as nutcracker's server_eof,
// server_timedout and server_err count them.
func (s *serverStats) closed(err error) {
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		s.eof.Add(1)
	case errors.Is(err, ErrTimeout), errors.As(err, &ne) && ne.Timeout():
		s.timedout.Add(1)
	default:
		s.err.Add(1)
	}
}
