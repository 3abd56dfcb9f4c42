//go:build !linux

package bench

import "time"

// clock returns a wall clock where the thread's CPU time is not available.
func clock() (now func() time.Duration, done func()) {
	start := time.Now()
	return func() time.Duration { return time.Since(start) }, func() {}
}

// ClockKind names what NsPerOp measures.
const ClockKind = "wall time"
