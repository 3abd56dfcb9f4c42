package proxy

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a socket with raw system calls, waiting for
// readiness through Go's network poller as net.Conn does.
//
// The socket is non-blocking, so a read or write returns at once; a raw
// call skips the runtime's entersyscall/exitsyscall. That bookkeeping
// matters to a proxy far more than its few dozen nanoseconds suggest: the
// first system call after the process was idle wakes the runtime's monitor
// thread, which then polls every 20 us for a while, and a proxy that waits
// on the network goes idle between most requests. On a 2-core VM under 16
// closed-loop clients the monitor's wake-ups were 31% of the proxy's
// context switches (perf record -e sched:sched_switch).
type rawIO struct {
	rc syscall.RawConn
}

// newRawIO returns the raw reader-writer of conn, or nil when conn is not a
// socket that offers one.
func newRawIO(conn net.Conn) *rawIO {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return &rawIO{rc: rc}
}

func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n uintptr
	var errno syscall.Errno
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			n, _, errno = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch errno {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait until readable
			}
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err // closed or past the deadline
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return int(n), nil
}

func (r *rawIO) Write(p []byte) (int, error) {
	done := 0
	var errno syscall.Errno
	err := r.rc.Write(func(fd uintptr) bool {
		for done < len(p) {
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[done])), uintptr(len(p)-done))
			switch e {
			case 0:
				done += int(n)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // wait until writable
			default:
				errno = e
				return true
			}
		}
		return true
	})
	if err == nil && errno != 0 {
		err = os.NewSyscallError("write", errno)
	}
	return done, err
}
