package proxy

import (
	"errors"
	"io"
	"time"
)

// A request the proxy gave up on at its timeout was sent: the server runs
// it when it next reads that connection, which a stalled server does once
// it runs again, and a busy machine may schedule after the connections a
// return settles on. A late write run after the return settled its key
// leaves the server holding a value older than one acknowledged while it
// was out (TestReplicaReturnOutlivesALateWrite; a run at load 14-28 on 2
// cores read v2 at a copy back where v3 was acknowledged). So a timed-out
// connection is not closed but half-closed: the proxy sends nothing more
// and reads, discarding, until the server closes its end - which it does
// once it has read, and run, everything sent before. While a connection
// of a server out is so drained, its return waits (errLate): it settles
// only once no request given up on can still run there.
//
// lateBound bounds the wait, for a server or link that never closes the
// connection: past it the connection is closed, and a request still
// held may run after the return, as before.
const lateBound = time.Minute

// errLate is why a server stays down whose connections with requests the
// proxy gave up on are still open: a return settled before they ran
// could be overwritten by them.
var errLate = errors.New("requests given up on at their timeout may still run on it (their connections are still open): tried again at the next probe")

// drainLate half-closes the connection of s, stopped because a request on
// it timed out, and reads it until the server closes it or lateBound
// passes, counting it in b's outage meanwhile (see outage.late), and in
// its pool's late writes (see pool.lateWrites). A session that did not
// time out was closed already.
func (b *backend) drainLate(s *session) {
	if !s.timedOut.Load() {
		return
	}
	cw, ok := s.conn.(interface{ CloseWrite() error })
	if !ok || s.conn.SetDeadline(time.Now().Add(lateBound)) != nil || cw.CloseWrite() != nil {
		s.conn.Close()
		return
	}
	o := b.outage.Load()
	if o != nil {
		o.late.Add(1)
	}
	late := b.pool.lateWrites // nil for a backend of no pool made by newPool
	if late != nil {
		late.Add(1)
	}
	go func() {
		_, _ = io.Copy(io.Discard, s.conn)
		s.conn.Close()
		if o != nil {
			o.late.Add(-1)
		}
		if late != nil {
			late.Add(-1)
		}
	}()
}
