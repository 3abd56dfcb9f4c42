package bench

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sink keeps lookup results alive so that the compiler cannot drop a call.
// Measuring loops add up what each Loop returns in a local and store the
// sum here once at the end: a result variable whose address escapes lives
// on the heap, and two goroutines' variables can share a cache line, so
// that storing each result made two goroutines' lookups contend (the
// ring's 2-goroutine cost per lookup was 2.5 times its 1-goroutine cost in
// about half the runs, while a key hash alone was unaffected).
var sink atomic.Int64

// chunk is the number of lookups between two reads of the clock: enough that
// reading the clock costs nothing measurable, few enough to stop on time.
const chunk = 1024

// next returns the chunk of keys from i, cycling, and the position after it.
func next(keys []string, i int) ([]string, int) {
	end := min(i+chunk, len(keys))
	if end == len(keys) {
		return keys[i:end], 0
	}
	return keys[i:end], end
}

// NsPerOp runs loop over keys (cycling) for at least d of [ClockKind] and
// returns the mean nanoseconds per lookup.
func NsPerOp(loop Loop, keys []string, d time.Duration) float64 {
	now, done := clock()
	defer done()
	n, i, acc := 0, 0, 0
	start := now()
	for {
		var part []string
		part, i = next(keys, i)
		acc += loop(part)
		n += len(part)
		if el := now() - start; el >= d {
			sink.Add(int64(acc))
			return float64(el.Nanoseconds()) / float64(n)
		}
	}
}

// Allocs returns the allocations of one lookup, averaged over many.
func Allocs(loop Loop, keys []string) float64 {
	i, acc := 0, 0
	a := testing.AllocsPerRun(1000, func() {
		acc += loop(keys[i%len(keys) : i%len(keys)+1])
		i++
	})
	sink.Add(int64(acc))
	return a
}

// Median returns the median of xs (the mean of the middle two for an even
// count); xs is sorted in place.
func Median(xs []float64) float64 {
	slices.Sort(xs)
	m := len(xs) / 2
	if len(xs)%2 == 0 {
		return (xs[m-1] + xs[m]) / 2
	}
	return xs[m]
}

// Interleaved times each loop for d per round over rounds rounds, each
// round running every loop once in turn, and returns each one's median
// round in ns per lookup: other work on a shared machine then slows every
// loop alike rather than whichever ran at the wrong moment.
func Interleaved(loops []Loop, keys []string, d time.Duration, rounds int) []float64 {
	runs := make([][]float64, len(loops))
	for range rounds {
		for i, l := range loops {
			runs[i] = append(runs[i], NsPerOp(l, keys, d))
		}
	}
	med := make([]float64, len(loops))
	for i, r := range runs {
		med[i] = Median(r)
	}
	return med
}

// HeapBytes builds a value with build and returns it with the bytes it
// holds on the heap: live heap after a GC, before and after building.
func HeapBytes[T any](build func() (T, error)) (T, int64, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v, err := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return v, int64(after.HeapAlloc) - int64(before.HeapAlloc), err
}

// MinDuration runs f reps times and returns its fastest run: on a shared
// machine the minimum is the run least disturbed by others.
func MinDuration(reps int, f func() error) (time.Duration, error) {
	best := time.Duration(-1)
	for range reps {
		t0 := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		if d := time.Since(t0); best < 0 || d < best {
			best = d
		}
	}
	return best, nil
}

// TimeAdd returns the fastest of reps additions of one node (with vnodes
// points) to a fresh placement of ids; the build is not timed.
func TimeAdd(l Lib, ids []string, vnodes, reps int) (time.Duration, error) {
	best := time.Duration(-1)
	for r := range reps {
		inst, err := l.New(ids, vnodes)
		if err != nil {
			return 0, err
		}
		t0 := time.Now()
		if err := inst.Add(NewNodeID(r)); err != nil {
			return 0, err
		}
		if d := time.Since(t0); best < 0 || d < best {
			best = d
		}
	}
	return best, nil
}

// Balance returns the largest number of keys on one of nodes over the
// average number per node.
func Balance(lookup func(string) string, keys []string, nodes int) float64 {
	count := map[string]int{}
	for _, k := range keys {
		count[lookup(k)]++
	}
	most := 0
	for _, c := range count {
		most = max(most, c)
	}
	return float64(most) * float64(nodes) / float64(len(keys))
}

// Moved returns the fraction of keys whose owner differs between before
// and after.
func Moved(before, after func(string) string, keys []string) float64 {
	moved := 0
	for _, k := range keys {
		if before(k) != after(k) {
			moved++
		}
	}
	return float64(moved) / float64(len(keys))
}

// Throughput runs loop over keys on g goroutines for d and returns the
// lookups per second of all of them together.
func Throughput(loop Loop, keys []string, g int, d time.Duration) float64 {
	var total atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := range g {
		wg.Go(func() {
			n, i, acc := 0, w*len(keys)/g, 0
			for n == 0 || time.Since(start) < d { // at least one chunk each
				var part []string
				part, i = next(keys, i)
				acc += loop(part)
				n += len(part)
			}
			sink.Add(int64(acc))
			total.Add(int64(n))
		})
	}
	wg.Wait()
	return float64(total.Load()) / time.Since(start).Seconds()
}

// ParallelCost runs lookup on g goroutines at once, each for at least d of
// its own thread's CPU time, and returns the mean cost per lookup over
// them. If lookups share nothing that the goroutines contend for (a lock, a
// counter, a written cache line), the cost stays that of one goroutine
// alone, and g cores give g times the throughput of one. On a machine busy
// with other work that holds for the CPU time each goroutine gets, while
// wall-clock throughput ([Throughput]) also counts the time others hold
// the cores.
func ParallelCost(loop Loop, keys []string, g int, d time.Duration) float64 {
	costs := make([]float64, g)
	var wg sync.WaitGroup
	for w := range g {
		wg.Go(func() {
			at := w * len(keys) / g
			shifted := append(append(make([]string, 0, len(keys)), keys[at:]...), keys[:at]...)
			costs[w] = NsPerOp(loop, shifted, d)
		})
	}
	wg.Wait()
	sum := 0.0
	for _, c := range costs {
		sum += c
	}
	return sum / float64(g)
}

// StallReport is what LookupsDuringChanges measured.
type StallReport struct {
	// Changes is the number of changes the writer completed.
	Changes int
	// MeanNs is the mean wall time of a lookup.
	MeanNs float64
	// MeanCPUNs is the mean CPU time of a lookup on the reader's thread:
	// what the lookup itself costs, without the time the reader waited for
	// a core. Waiting on a lock would show in MeanNs, spinning in both.
	MeanCPUNs float64
	// WorstBatchNs is the cost per lookup of the slowest batch of
	// [chunk] lookups: a lookup that waited for a change would show here.
	WorstBatchNs float64
	// P999BatchNs is the 99.9th percentile of the batches' cost per lookup.
	P999BatchNs float64
}

// LookupsDuringChanges runs lookups in batches on one goroutine for d while,
// if change is not nil, another goroutine calls change in a loop, and
// reports the lookups' cost per batch.
func LookupsDuringChanges(loop Loop, keys []string, change func(i int) error, d time.Duration) (StallReport, error) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var changes atomic.Int64
	var werr error
	if change != nil {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := change(i); err != nil {
					werr = err
					return
				}
				changes.Add(1)
			}
		})
	}
	cpu, unlock := clock()
	defer unlock()
	var batches []float64
	i, acc, n := 0, 0, 0
	cpu0 := cpu()
	start := time.Now()
	for len(batches) == 0 || time.Since(start) < d {
		t0 := time.Now()
		var part []string
		part, i = next(keys, i)
		acc += loop(part)
		n += len(part)
		batches = append(batches, float64(time.Since(t0).Nanoseconds())/float64(len(part)))
	}
	el, cpuEl := time.Since(start), cpu()-cpu0
	close(stop)
	wg.Wait()
	sink.Add(int64(acc))
	slices.Sort(batches)
	return StallReport{
		Changes:      int(changes.Load()),
		MeanNs:       float64(el.Nanoseconds()) / float64(n),
		MeanCPUNs:    float64(cpuEl.Nanoseconds()) / float64(n),
		WorstBatchNs: batches[len(batches)-1],
		P999BatchNs:  batches[len(batches)*999/1000],
	}, werr
}
