//go:build unix

package proxy

import (
	"fmt"
	"net"
	"os"
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

// listenerFile returns a copy of ln's socket, named name, for a new
// process to inherit (Server.ListenerFiles). Not net's File: the
// os.File it returns puts the socket into blocking mode when its Fd is
// called, as os/exec calls it on every inherited file, and that mode is
// the open file description's, shared by the copy and the socket ln
// still accepts on. An accept(2) the accept loop makes then, until the
// new process sets the socket non-blocking again, sleeps in the kernel
// until a connection comes, and Close waits for it: a handover's old
// process, a client having connected as it started the new one, hung in
// its Shutdown for as long as no other client connected, holding the
// server's lock and serving its clients by a configuration no longer
// reloaded (a fault schedule's seed 2643: a minute, 33 keys not
// linearizable, 2 keys' acknowledged writes lost). os.NewFile of a
// descriptor already non-blocking leaves the mode to the caller.
func listenerFile(ln net.Listener, name string) (*os.File, error) {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("%s: %T has no file", name, ln)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd, dupErr := -1, error(nil)
	err = rc.Control(func(s uintptr) {
		// Under ForkLock, as os/exec's children must not inherit the
		// copy before it is close-on-exec.
		syscall.ForkLock.RLock()
		defer syscall.ForkLock.RUnlock()
		if fd, dupErr = syscall.Dup(int(s)); dupErr == nil {
			syscall.CloseOnExec(fd)
		}
	})
	switch {
	case err != nil:
		return nil, err
	case dupErr != nil:
		return nil, fmt.Errorf("%s: %w", name, os.NewSyscallError("dup", dupErr))
	}
	return os.NewFile(uintptr(fd), name), nil
}
