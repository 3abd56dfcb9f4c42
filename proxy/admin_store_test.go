package proxy

import (
	"testing"
	"time"
)

// TestMoveEstimate: to_move and eta server by server. A server that
// gives all its keys away, half listed and a fifth moved by requests
// before the mover came to them, moves all 1000, and what is left takes
// the time its keys left it at over the last second; a server that keeps
// most of its keys moves the placements' share of those not listed yet,
// weighed with the share found; a server the mover has been through adds
// the keys it found, and no time; a server not listed yet counts its
// placements' share, and leaves the time unknown until keys leave it, or
// when its share is unknown too.
func TestMoveEstimate(t *testing.T) {
	type src struct {
		held, scanned, found, byRequests, moved, share int64
		perSecond                                      float64
		done                                           bool
	}
	for _, c := range []struct {
		name    string
		sources []src
		toMove  int64
		eta     float64
	}{
		{"a server removed", []src{{held: 1000, scanned: 500, found: 500, byRequests: 200, moved: 300, share: 1e6, perSecond: 100},
			{held: 1000, scanned: 1000, done: true, share: 0}}, 1000, 5},
		{"a server added", []src{{held: 1000, scanned: 400, found: 80, moved: 60, share: 200_000, perSecond: 70},
			{held: 1000, scanned: 1000, found: 200, moved: 200, done: true, share: 200_000}}, 400, 2},
		{"all done", []src{{held: 10, scanned: 10, found: 2, moved: 2, done: true, share: -1}}, 2, 0},
		{"one without a share, not listed yet", []src{{held: 1000, scanned: 500, found: 100, moved: 50, share: -1, perSecond: 100},
			{held: 1000, share: -1}}, 200, -1},
		{"one not listed yet", []src{{held: 1000, share: 250_000}}, 250, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			now := time.Now()
			m := &storeMove{}
			m.stats.opened.Store(now.Add(-2 * time.Second).UnixNano())
			for i, s := range c.sources {
				ss := m.stats.source(string(rune('a' + i)))
				ss.held.Store(s.held)
				ss.scanned.Store(s.scanned)
				ss.found.Store(s.found)
				ss.onRequest.Store(s.byRequests)
				ss.moved.Store(s.moved)
				ss.share.Store(s.share)
				ss.done.Store(s.done)
				if s.perSecond > 0 {
					ss.pace.marks = []paceMark{{now.Add(-time.Second), s.moved + s.byRequests - int64(s.perSecond)}}
				}
			}
			toMove, eta := moveEstimateAt(m, now)
			if toMove != c.toMove || eta != c.eta {
				t.Errorf("to_move %d, eta %v s; want %d, %v s", toMove, eta, c.toMove, c.eta)
			}
		})
	}
}

// TestMovePace: the pace of a server's keys is the keys moved over the
// marks of the last two seconds or so, one a quarter of a second at
// most, and none before a tenth of a second has passed.
func TestMovePace(t *testing.T) {
	var mp movePace
	t0 := time.Now()
	if r := mp.rate(t0, 0); r != 0 {
		t.Errorf("rate with no mark %v", r)
	}
	mp.note(t0, 0)
	if r := mp.rate(t0.Add(50*time.Millisecond), 10); r != 0 {
		t.Errorf("rate after 50 ms %v, want 0 (unknown)", r)
	}
	// 1000 keys a second for 2 s, then 100 a second: two and a half
	// seconds after the change the pace is the new one.
	for i := 1; i <= 20; i++ {
		mp.note(t0.Add(time.Duration(i)*100*time.Millisecond), int64(100*i))
	}
	if r := mp.rate(t0.Add(2*time.Second), 2000); r < 999 || r > 1001 {
		t.Errorf("rate %v, want 1000", r)
	}
	for i := 1; i <= 25; i++ {
		mp.note(t0.Add(2*time.Second+time.Duration(i)*100*time.Millisecond), 2000+int64(10*i))
	}
	if r := mp.rate(t0.Add(4500*time.Millisecond), 2250); r < 99 || r > 101 {
		t.Errorf("rate after the change %v, want 100", r)
	}
}
