package proxy

import "sync/atomic"

// warmGate keeps a client's requests in a migration window in the order
// the client sent them. A read of a moved key may fall back to a previous
// server after its reply from the new one, off the client's reader; a
// write, delete or pull of the client's sent meanwhile could delete the
// value the read is about to find, or be overtaken by the read's copy.
// So the client's reader counts each such read in the gate until it ends,
// and a later write, delete or pull waits until none is counted. A pull
// (a command that reads or changes the value held) falls back on the
// reader itself, so that nothing of the client's goes out before its
// write is queued. Reads do not wait for reads: a later read that misses
// falls back to the same value. Outside a window nothing touches the
// gate.
type warmGate struct {
	n atomic.Int32
	// wake receives when n drops to 0; made by the client's reader
	// before it first counts a read.
	wake chan struct{}
}

// enter counts a read that may fall back; called on the client's reader.
func (g *warmGate) enter() {
	if g.wake == nil {
		g.wake = make(chan struct{}, 1)
	}
	g.n.Add(1)
}

// leave ends a read counted by enter.
func (g *warmGate) leave() {
	if g.n.Add(-1) == 0 {
		select {
		case g.wake <- struct{}{}:
		default: // a wake is pending already
		}
	}
}

// wait returns once no read is counted, writing the client's queued
// requests first (batch) so that the reads it waits for go out. A wake
// left over from an earlier wait only makes it look again.
func (g *warmGate) wait(batch *flushBatch) {
	if g == nil || g.n.Load() == 0 {
		return
	}
	if batch != nil {
		batch.flush()
	}
	for g.n.Load() != 0 {
		<-g.wake
	}
}

// warmEnd ends a request in a migration window: it leaves the client's
// gate if the request was counted in it, then lets the reply be written.
func (r *mcRequest) warmEnd() {
	if w := r.warm; w.gated {
		w.gated = false
		r.gate.leave()
	}
	r.answered()
}
