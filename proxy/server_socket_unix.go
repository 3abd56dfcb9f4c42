//go:build unix

package proxy

import (
	"fmt"
	"net"
	"syscall"
)

// setBacklog sets the listening socket's backlog to the pool's, as
// nutcracker passes its backlog to listen(2). Go listens with the
// system's largest (somaxconn) and offers no other; listen(2) called
// again on a listening socket sets the new backlog, which the kernel caps
// at somaxconn. On error ln is closed.
func (l listenSpec) setBacklog(ln net.Listener) error {
	if l.backlog <= 0 {
		return nil
	}
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err == nil {
		cerr := rc.Control(func(fd uintptr) { err = syscall.Listen(int(fd), l.backlog) })
		if err == nil {
			err = cerr
		}
	}
	if err != nil {
		ln.Close()
		return fmt.Errorf("backlog %d: %w", l.backlog, err)
	}
	return nil
}
