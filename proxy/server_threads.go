package proxy

import (
	"context"
	"log/slog"
	"os"
	"runtime"
	"time"
)

// A proxy's goroutines hand each request on several times - the client's
// reader, the server connection's reader, the client's writer - and with
// an idle processor each hand-off wakes another thread to run it: on a
// machine whose cores the proxy shares with its servers and clients, the
// extra context switches cost more than the second core gives while the
// proxy's work fits in one. Measured with the comparison in mc_bench_test.go
// on a 2-core VM, the proxy spent 7-25% more CPU time per request at
// GOMAXPROCS=2 than at 1, at no higher throughput. So, unless told
// otherwise, the program runs the proxy on one thread while its work fits
// in one core, and on every core once it does not (see AdaptThreads).

// Thresholds of AdaptThreads: the share of one core the process uses,
// measured each second, that makes it use every core (two seconds above
// threadsUp) or one again (ten seconds below threadsDown).
const (
	threadsUp   = 0.85
	threadsDown = 0.6
)

// AdaptThreads sets GOMAXPROCS, until ctx is done, to 1 while the process
// uses less than threadsUp of one core, and to the number of cores (the
// runtime's default) once it uses more for two seconds in a row; back to
// 1 after ten seconds under threadsDown. It does nothing when the
// GOMAXPROCS environment variable is set or there is one core. When ctx
// is done, GOMAXPROCS is the runtime's default again. Changes are logged.
func AdaptThreads(ctx context.Context, log *slog.Logger) {
	most := runtime.GOMAXPROCS(0)
	if os.Getenv("GOMAXPROCS") != "" || most <= 1 || processCPU() < 0 {
		return
	}
	defer runtime.GOMAXPROCS(most)
	runtime.GOMAXPROCS(1)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	prevCPU, prev := processCPU(), time.Now()
	var tr threadsTrend
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			cpu := processCPU()
			load := float64(cpu-prevCPU) / float64(now.Sub(prev))
			prevCPU, prev = cpu, now
			procs := runtime.GOMAXPROCS(0)
			if next := tr.next(procs, most, load); next != procs {
				runtime.GOMAXPROCS(next)
				log.Info("threads adapted to the load", "threads", next, "load", load)
			}
		}
	}
}

// threadsTrend counts the seconds in a row the load called for more
// threads, or fewer.
type threadsTrend struct{ above, below int }

// next returns the threads for the next second, of procs now and most at
// most, given the load of the last second in cores.
func (tr *threadsTrend) next(procs, most int, load float64) int {
	switch {
	case procs == 1 && load > threadsUp:
		if tr.above++; tr.above >= 2 {
			tr.above = 0
			return most
		}
	case procs > 1 && load < threadsDown:
		if tr.below++; tr.below >= 10 {
			tr.below = 0
			return 1
		}
	default:
		tr.above, tr.below = 0, 0
	}
	return procs
}
