package proxy

import (
	"testing"
	"time"
)

// TestMoveEstimate: to_move and eta server by server. A server that
// gives all its keys away, half listed and a fifth moved by requests
// before the mover came to them, moves all 1000, and what is left takes
// the time the keys took, the mover's and the requests', since the mover
// began on it (at the pace of one mark: see TestMovePace), the time the
// move stood still (paused, or outside store.hours) left out, whether it
// ended or stands still now; a server that keeps most of its keys moves
// the placements' share of those not listed yet, weighed with the share
// found; a server the mover has been through adds the keys it found, and
// no time; a server not listed yet counts its placements' share, and
// leaves the time unknown, as do a share unknown too, and a server that
// has moved too few keys (under 10%) or for too short a time (under a
// fifth of a second) to set a pace by.
func TestMoveEstimate(t *testing.T) {
	type src struct {
		held, scanned, found, byRequests, moved, share int64
		began                                          time.Duration // before now; 0: not begun
		done                                           bool
	}
	removed := src{held: 1000, scanned: 500, found: 500, byRequests: 200, moved: 300, share: 1e6, began: 3 * time.Second}
	for _, c := range []struct {
		name   string
		idle   [2]time.Duration // the move stood still from idle[0] before now to idle[1] before now
		stands bool             // and stands still since idle[0]
		srcs   []src
		toMove int64
		eta    float64
	}{
		{name: "a server removed", srcs: []src{removed, {held: 1000, scanned: 1000, done: true, share: 0}}, toMove: 1000, eta: 3},
		{name: "a server removed, paused and resumed", idle: [2]time.Duration{11 * time.Second, time.Second},
			srcs: []src{{held: 1000, scanned: 500, found: 500, byRequests: 200, moved: 300, share: 1e6, began: 13 * time.Second}}, toMove: 1000, eta: 3},
		{name: "a server removed, paused now", idle: [2]time.Duration{10 * time.Second}, stands: true,
			srcs: []src{{held: 1000, scanned: 500, found: 500, byRequests: 200, moved: 300, share: 1e6, began: 13 * time.Second}}, toMove: 1000, eta: 3},
		{name: "a server added", srcs: []src{{held: 1000, scanned: 400, found: 80, moved: 60, share: 200_000, began: 3 * time.Second},
			{held: 1000, scanned: 1000, found: 200, moved: 200, done: true, share: 200_000}}, toMove: 400, eta: 7},
		{name: "all done", srcs: []src{{held: 10, scanned: 10, found: 2, moved: 2, done: true, share: -1}}, toMove: 2},
		{name: "one without a share, not listed yet", srcs: []src{{held: 1000, scanned: 500, found: 100, moved: 50, share: -1, began: time.Second},
			{held: 1000, share: -1}}, toMove: 200, eta: -1},
		{name: "one not listed yet", srcs: []src{{held: 1000, share: 250_000, began: time.Second}}, toMove: 250, eta: -1},
		{name: "too few keys moved", srcs: []src{{held: 1000, scanned: 40, found: 40, moved: 40, share: 1e6, began: 3 * time.Second}}, toMove: 1000, eta: -1},
		{name: "too soon", srcs: []src{{held: 1000, scanned: 300, found: 300, moved: 300, share: 1e6, began: 150 * time.Millisecond}}, toMove: 1000, eta: -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			now := time.Now()
			m := &storeMove{}
			m.stats.opened.Store(now.Add(-20 * time.Second).UnixNano())
			if c.idle[0] > 0 {
				m.stats.standStill(now.Add(-c.idle[0]), true)
				m.stats.standStill(now.Add(-c.idle[0]/2), true) // still: counted once
				if !c.stands {
					m.stats.standStill(now.Add(-c.idle[1]), false)
				}
			}
			for i, s := range c.srcs {
				ss := m.stats.source(string(rune('a' + i)))
				ss.held.Store(s.held)
				ss.scanned.Store(s.scanned)
				ss.found.Store(s.found)
				ss.onRequest.Store(s.byRequests)
				ss.moved.Store(s.moved)
				ss.share.Store(s.share)
				ss.done.Store(s.done)
				if s.began > 0 {
					ss.pace.note(now.Add(-s.began), 0)
				}
			}
			toMove, eta := moveEstimateAt(m, now)
			if toMove != c.toMove || abs(eta-c.eta) > 1e-9 {
				t.Errorf("to_move %d, eta %v s; want %d, %v s", toMove, eta, c.toMove, c.eta)
			}
		})
	}
}

// TestMovePace: the pace of a server's keys is taken from the mark half
// the time since the mover began back, or paceSpan (5 s) when that is
// longer, the time the move stood still left out: 1000 keys a second for
// 10 s, then 100 a second for 10 s, is 100 a second (half of 20 s back);
// after 4 s it is the 1000 since the start; paused for 10 s in the middle
// of the slow part, it is the same 100 a second; with no mark it is 0.
// The marks span the move: 1,000 notes every 10 ms leave at most
// paceMarks of them, the first kept.
func TestMovePace(t *testing.T) {
	t0 := time.Now()
	step := func(i int) time.Time { return t0.Add(time.Duration(i) * 100 * time.Millisecond) }
	var st moveStats
	var mp movePace
	if r, _ := mp.rate(&st, t0, 0); r != 0 {
		t.Errorf("rate with no mark %v", r)
	}
	for i := range 200 {
		mp.note(step(i), int64(100*min(i, 100)+10*max(i-100, 0)))
	}
	if r, began := mp.rate(&st, step(40), 4000); r < 999 || r > 1001 || began != 4*time.Second {
		t.Errorf("rate after 4 s %v over %v, want 1000 over 4s", r, began)
	}
	if r, _ := mp.rate(&st, step(200), 11000); r < 99 || r > 101 {
		t.Errorf("rate after the change %v, want 100", r)
	}
	var paused moveStats
	var mp2 movePace
	for i := range 300 {
		if i >= 150 && i < 250 {
			continue // paused: no keys move
		}
		active := i - max(min(i, 250)-150, 0)
		mp2.note(step(i), int64(100*min(active, 100)+10*max(active-100, 0)))
	}
	paused.standStill(step(150), true)
	paused.standStill(step(250), false)
	if r, began := mp2.rate(&paused, step(300), 11000); r < 99 || r > 101 || began != 20*time.Second {
		t.Errorf("rate after a pause %v over %v, want 100 over 20s", r, began)
	}
	var many movePace
	for i := range 1000 {
		many.note(t0.Add(time.Duration(i)*10*time.Millisecond), int64(i))
	}
	if len(many.marks) > paceMarks || many.marks[0].at != t0 {
		t.Errorf("%d marks, the first at %v; want %d at most, the first at the start", len(many.marks), many.marks[0].at.Sub(t0), paceMarks)
	}
}
