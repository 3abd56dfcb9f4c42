//go:build linux && !race && !msan && !asan

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
//
// Race, memory and address sanitizer builds use net.Conn instead
// (io_raw_other.go): a raw call does not tell them which memory the kernel
// read or wrote.
//
// One goroutine at a time may Read, and one at a time may Write: each
// direction keeps its state, and the function handed to the RawConn, in
// the struct, so that a call allocates nothing.
type rawIO struct {
	rc syscall.RawConn
	r  rawOp
	w  rawOp
}

// rawOp is the state of one read or write under way.
type rawOp struct {
	p     []byte
	done  int
	errno syscall.Errno
	fn    func(fd uintptr) bool
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
	x := &rawIO{rc: rc}
	x.r.fn = x.r.read
	x.w.fn = x.w.write
	return x
}

// read is called by RawConn.Read until it returns true: false means the
// socket has nothing to read yet.
func (o *rawOp) read(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&o.p[0])), uintptr(len(o.p)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		o.done, o.errno = int(n), e
		return true
	}
}

// write is called by RawConn.Write until it returns true: false means the
// socket's buffer is full.
func (o *rawOp) write(fd uintptr) bool {
	for o.done < len(o.p) {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&o.p[o.done])), uintptr(len(o.p)-o.done))
		switch e {
		case 0:
			o.done += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			o.errno = e
			return true
		}
	}
	return true
}

func (x *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	o := &x.r
	o.p, o.done, o.errno = p, 0, 0
	err := x.rc.Read(o.fn)
	n, errno := o.done, o.errno
	o.p = nil
	switch {
	case err != nil:
		return 0, err // closed or past the deadline
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (x *rawIO) Write(p []byte) (int, error) {
	o := &x.w
	o.p, o.done, o.errno = p, 0, 0
	err := x.rc.Write(o.fn)
	n, errno := o.done, o.errno
	o.p = nil
	if err == nil && errno != 0 {
		err = os.NewSyscallError("write", errno)
	}
	return n, err
}
