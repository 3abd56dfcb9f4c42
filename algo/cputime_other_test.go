//go:build !linux

package algo_test

import "time"

// threadCPU returns 0: the benchmarks report CPU time on Linux only.
func threadCPU() time.Duration { return 0 }
