//go:build linux

package algo_test

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time of the calling thread (getrusage's
// RUSAGE_THREAD), which a busy machine disturbs less than wall time: it
// does not count the time other processes hold the core.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD, which package syscall does not name
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
