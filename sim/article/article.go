// Package article reruns every measurement of the article this module
// reproduces, "Консистентное хеширование: кольцо хешей, виртуальные узлы и
// код на Python" - a walk through consistent hashing with a small Python
// ring - with its set-up, and prints its tables with its rounding: hash % N
// against a ring, virtual nodes from 1 to 1000, node name sets, failures,
// weights, rendezvous hashing and the cost of a change. Every figure equals
// the one the article's own code computes; where its text and its code
// disagree (the weight split), the code's figure is printed.
//
// It uses the article's ring ([ring.ArticleConfig]: md5, "ID#i" points),
// counts as Python's collections.Counter breaks ties, and rounds as
// Python's statistics module does (package
// [github.com/kolco-dev/kolco/sim/stats]).
package article

import (
	"runtime"
	"strconv"
	"sync"

	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/sim/internal/parallel"
)

// The article's measurement set-up: its key names, key counts, node
// names and vnode counts. Changing any of them changes the figures.
const (
	articleKeys       = 1_000_000
	articleSampleKeys = 100_000
	articleRendezvous = 200_000
	articleNameSets   = 30
	articleNodes      = 10
)

var articleVNodes = []int{1, 10, 100, 1000}

// Run reruns every measurement of the article on all cores. progress,
// if not nil, is told of each finished step.
func Run(progress func(done, total int, step string)) (*Figures, error) {
	a := &Figures{Keys: map[string]int{
		"modulo": articleKeys, "one_ring": articleKeys, "name_sets": articleSampleKeys,
		"failures": articleKeys, "weights": articleKeys, "rendezvous": articleRendezvous,
	}}
	keys := userKeys(articleKeys)
	hashes := hashAll(keys, keyhash.MD5)
	a.Modulo = moduloTable(hashes)
	all, sample := sortKeys(hashes), sortKeys(hashes[:articleSampleKeys])
	a.Cost = Cost()

	var jobs []func() error
	jobs = append(jobs, func() (err error) { a.Demo, err = articleDemo(); return })
	a.OneRing = make([]RemapRow, len(articleVNodes))
	for i, v := range articleVNodes {
		jobs = append(jobs, func() (err error) { a.OneRing[i], err = remap(v, all, "node"); return })
	}
	sets := make([][]RemapRow, len(articleVNodes))
	for i, v := range articleVNodes {
		sets[i] = make([]RemapRow, articleNameSets)
		for s := range articleNameSets {
			jobs = append(jobs, func() (err error) {
				sets[i][s], err = remap(v, sample, "s"+strconv.Itoa(s))
				return
			})
		}
	}
	a.Failures = make([]FailureRow, 2)
	for i, v := range []int{1, 100} {
		jobs = append(jobs, func() (err error) { a.Failures[i], err = failure(v, all); return })
	}
	a.Weights = make([]WeightRow, 2)
	for i, v := range []int{1000, 100} {
		jobs = append(jobs, func() (err error) { a.Weights[i], err = weights(v, all); return })
	}
	rv, rvJobs := rendezvousRemap(keys[:articleRendezvous])
	jobs = append(jobs, rvJobs...)

	if err := runAll(jobs, progress); err != nil {
		return nil, err
	}
	for i, v := range articleVNodes {
		a.NameSets = append(a.NameSets, summarize(v, sets[i]))
	}
	a.Rendezvous = rv.row()
	return a, nil
}

// runAll runs jobs on all cores, in the order given, and returns the
// first error.
func runAll(jobs []func() error, progress func(done, total int, step string)) error {
	var (
		mu    sync.Mutex
		next  int
		done  int
		first error
		wg    sync.WaitGroup
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(jobs) {
					return
				}
				err := jobs[i]()
				mu.Lock()
				done++
				if err != nil && first == nil {
					first = err
				}
				if progress != nil {
					progress(done, len(jobs), "article")
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

// userKeys returns the article's keys "user:0" ... "user:n-1".
func userKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i)
	}
	return keys
}

// hashAll hashes keys on all cores.
func hashAll(keys []string, hash keyhash.Func) []uint64 {
	out := make([]uint64, len(keys))
	parallel.For(len(keys), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = hash(keys[i])
		}
	})
	return out
}
