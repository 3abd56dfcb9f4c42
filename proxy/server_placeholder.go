package proxy

import (
	"log/slog"
	"sync"
	"time"
)

// A pool on a membership source starts on its configured servers only
// until its source's first version, when the source has not answered by
// the time the pool is built: those servers are a default, which no
// source named, and may be anything - a server that left the fleet long
// ago and still holds keys the fleet has rewritten elsewhere since. So its
// listener accepts only once the pool serves a version its source named
// (or the source answered with one the pool cannot serve), for at most
// sourceWait; then the configured servers serve until the source answers,
// as nutcracker serves its servers line. Either way the first version
// places the keys afresh: nothing is read from, copied from or deleted on
// the configured servers (see sourceView.placeholder).

// placeGate holds a listener's sockets until open.
type placeGate struct {
	ch    chan struct{}
	once  sync.Once
	timer *time.Timer
}

// gatePlaced makes l accept only once l.placed is called, or sourceWait
// has passed, which it then says on log. The caller holds Server.mu.
func (l *listener) gatePlaced(log *slog.Logger) {
	g := &placeGate{ch: make(chan struct{})}
	l.gate = g
	gl := &gatedListener{Listener: l.ln, open: g.ch, closed: make(chan struct{})}
	l.ln = gl
	if l.side != nil {
		l.side = &gatedListener{Listener: l.side, open: g.ch, closed: make(chan struct{})}
	}
	name := l.name
	g.timer = time.AfterFunc(sourceWait, func() {
		select {
		case <-gl.closed: // the pool is gone, or never served
			return
		default:
		}
		if g.open() {
			log.Warn("membership: no version from the source yet; serving the configured servers until it answers, "+
				"and placing keys afresh by its first version", "pool", name, "waited", sourceWait)
		}
	})
}

// open opens the gate; it reports whether this call opened it.
func (g *placeGate) open() bool {
	opened := false
	g.once.Do(func() {
		opened = true
		g.timer.Stop()
		close(g.ch)
	})
	return opened
}

// placed lets l accept clients, if it waited for its pool's source.
func (l *listener) placed() {
	if l.gate != nil {
		l.gate.open()
	}
}
