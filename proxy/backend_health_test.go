package proxy

import (
	"testing"
	"time"
)

// TestHealthFailureLimit: the limit-th consecutive failure marks a server
// down, once; a success in between starts the count again; restore brings
// it back and says whether it was down.
func TestHealthFailureLimit(t *testing.T) {
	var h health
	if h.failed(2, time.Minute, func() {}) {
		t.Fatal("down after one failure of a limit of 2")
	}
	h.succeeded()
	if h.failed(2, time.Minute, func() {}) {
		t.Fatal("down after a success and one failure")
	}
	before := time.Now()
	if !h.failed(2, time.Minute, func() {}) || !h.isDown() {
		t.Fatal("not down after two consecutive failures")
	}
	if at := h.retryTime(); at.Before(before.Add(time.Minute)) {
		t.Errorf("retry at %v, want a minute after the failure", at)
	}
	if h.failed(2, time.Minute, func() {}) {
		t.Error("a failure of a down server marked it down again")
	}
	if !h.restore() || h.isDown() {
		t.Fatal("restore of a down server")
	}
	if h.restore() {
		t.Error("restore of a server that is up said it was down")
	}
	if h.failed(2, time.Minute, func() {}) {
		t.Error("down after one failure following a restore")
	}
}

// TestHealthInherit: a server a reload replaces passes on its standing
// only when it is down.
func TestHealthInherit(t *testing.T) {
	var up, down, next health
	down.failed(1, time.Hour, func() {})
	if next.inherit(&up) || next.isDown() {
		t.Fatal("inherited from a server that is up")
	}
	if !next.inherit(&down) || !next.isDown() || !next.retryTime().Equal(down.retryTime()) {
		t.Fatal("did not inherit a down server's standing")
	}
}
