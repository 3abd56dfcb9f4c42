//go:build !unix

package proxy

import "time"

// processCPU returns -1: the process's CPU time is read on unix only, and
// AdaptThreads does nothing elsewhere.
func processCPU() time.Duration { return -1 }
