//go:build linux

package bench

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// clock returns the CPU time of the calling thread, and a function that
// unlocks the goroutine from the thread when the measurement is over. On a
// machine shared with other work, wall time counts the time other
// processes hold the core; the thread's CPU time does not.
func clock() (now func() time.Duration, done func()) {
	runtime.LockOSThread()
	return func() time.Duration {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
			return 0
		}
		return time.Duration(ts.Nano())
	}, runtime.UnlockOSThread
}

// ClockKind names what NsPerOp measures.
const ClockKind = "thread CPU time"
