package proxy

import (
	"testing"
	"time"
)

// TestMoveEstimate: to_move and eta server by server. A server that
// gives all its keys away, half listed and a fifth moved by requests
// before the mover came to them, moves all 1000; the rest of its keys
// take the time the mover lists them in at its pace lately; a server the
// mover has been through adds the keys it found, and no time; a server
// not listed yet leaves the time unknown.
func TestMoveEstimate(t *testing.T) {
	type src struct {
		held, scanned, found, byRequests int64
		perSecond                        float64
		done                             bool
	}
	for _, c := range []struct {
		name    string
		sources []src
		toMove  int64
		eta     float64
	}{
		{"a server removed", []src{{held: 1000, scanned: 500, found: 500, byRequests: 200, perSecond: 100}, {held: 1000, scanned: 1000, done: true}}, 1000, 3},
		{"a server added", []src{{held: 1000, scanned: 400, found: 80, perSecond: 200}, {held: 1000, scanned: 1000, found: 200, done: true}}, 400, 3},
		{"all done", []src{{held: 10, scanned: 10, found: 2, done: true}}, 2, 0},
		{"one not listed yet", []src{{held: 1000, scanned: 500, found: 100, perSecond: 100}, {held: 1000}}, 200, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &storeMove{}
			m.stats.opened.Store(time.Now().Add(-time.Second).UnixNano())
			for i, s := range c.sources {
				ss := m.stats.source(string(rune('a' + i)))
				ss.held.Store(s.held)
				ss.scanned.Store(s.scanned)
				ss.found.Store(s.found)
				ss.onRequest.Store(s.byRequests)
				ss.done.Store(s.done)
				ss.pace.perSecond = s.perSecond
			}
			toMove, eta := moveEstimate(m)
			if toMove != c.toMove || eta != c.eta {
				t.Errorf("to_move %d, eta %v s; want %d, %v s", toMove, eta, c.toMove, c.eta)
			}
		})
	}
}
