package proxy

import (
	"context"
	"io"
	"log/slog"
	"os"
	"runtime"
	"testing"
)

// TestThreadsTrend: two busy seconds in a row give every core, ten quiet
// ones one thread again; anything between resets the count.
func TestThreadsTrend(t *testing.T) {
	for _, tc := range []struct {
		name  string
		procs int
		loads []float64
		want  int
	}{
		{"one busy second", 1, []float64{0.95}, 1},
		{"two busy seconds", 1, []float64{0.95, 0.9}, 4},
		{"busy, then not", 1, []float64{0.95, 0.5, 0.95}, 1},
		{"nine quiet seconds", 4, []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 4},
		{"ten quiet seconds", 4, []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 1},
		{"quiet, broken by a busy one", 4, []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.7, 0.1, 0.1, 0.1, 0.1}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tr threadsTrend
			procs := tc.procs
			for _, l := range tc.loads {
				procs = tr.next(procs, 4, l)
			}
			if procs != tc.want {
				t.Errorf("threads %d, want %d", procs, tc.want)
			}
		})
	}
}

// TestAdaptThreadsStartsWithOne: the proxy starts on one thread and leaves
// the runtime's default when done; with GOMAXPROCS in the environment it
// changes nothing.
func TestAdaptThreadsStartsWithOne(t *testing.T) {
	most := runtime.GOMAXPROCS(0)
	if os.Getenv("GOMAXPROCS") != "" || most == 1 {
		t.Skip("GOMAXPROCS set, or one core: AdaptThreads does nothing")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		AdaptThreads(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)))
		close(done)
	}()
	eventually(t, "one thread", func() bool { return runtime.GOMAXPROCS(0) == 1 })
	cancel()
	<-done
	if got := runtime.GOMAXPROCS(0); got != most {
		t.Errorf("GOMAXPROCS %d after AdaptThreads, want the default %d", got, most)
	}
}
