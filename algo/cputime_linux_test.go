//go:build linux

package algo_test

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU returns the CPU time of the calling thread
// (CLOCK_THREAD_CPUTIME_ID), which a busy machine disturbs less than wall
// time: it does not count the time other processes hold the core. The
// clock is read by the system call, which package syscall does not wrap;
// getrusage's thread time, which it does, advances only at the
// scheduler's ticks, milliseconds apart.
func threadCPU() time.Duration {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
