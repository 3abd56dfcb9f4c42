package faults

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Summary is what a run of seeds did and found.
type Summary struct {
	mu      sync.Mutex
	start   time.Time
	Seeds   int            // seeds run to the end
	Skipped int            // seeds with no combination to run
	Refused map[string]int // combinations skipped, by the reason
	Combos  map[string]int // combinations run, by protocol and kind
	Faults  map[string]int // faults applied, by kind
	// Histories checked, and their requests.
	Histories, Requests int
	// Failures, one line a seed.
	Failures []string
	// Undecided, one line a seed: a store's history whose linearizability
	// the checker did not decide in time. Not a failure, nor a history
	// shown linearizable: the headline counts it apart.
	Undecided []string
	Errors    map[string]int // clients' errors, by text
}

func newSummary() *Summary {
	return &Summary{start: time.Now(), Refused: map[string]int{}, Combos: map[string]int{}, Faults: map[string]int{}, Errors: map[string]int{}}
}

func (s *Summary) skip() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Skipped++
}

func (s *Summary) refuse(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Refused[why]++
}

// add counts a seed's run.
func (s *Summary) add(r *run, res result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Seeds++
	s.Combos[r.combo.protocol()+" "+r.combo.kind()+", "+r.combo.Source]++
	r.mu.Lock()
	for k, n := range r.applied {
		s.Faults[k] += n
	}
	troubles := len(r.troubles)
	r.mu.Unlock()
	s.Histories++
	s.Requests += res.ops
	for k, n := range res.errs {
		s.Errors[k] += n
	}
	if res.store && res.lin == porcupine.Unknown && !res.failed() {
		s.Undecided = append(s.Undecided, fmt.Sprintf("seed %d (%s): %s", r.seed, r.combo, strings.TrimSpace(res.linWhy)))
	}
	if res.failed() || troubles > 0 {
		what := ""
		switch {
		case len(res.violations) > 0:
			what = fmt.Sprintf("%d stale or wrong reads; the first: %s", len(res.violations), res.violations[0].Read)
		case len(res.lost) > 0 || res.store && res.failed():
			what = fmt.Sprintf("%s, %d keys lost", linName(res.lin), len(res.lost))
		default:
			what = fmt.Sprintf("%d faults not applied or undone", troubles)
		}
		s.Failures = append(s.Failures, fmt.Sprintf("seed %d (%s): %s", r.seed, r.combo, what))
	}
}

func (s *Summary) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%d seeds run in %v (%d skipped), %d histories checked, %d requests in them, %d failed, %d not decided in time\n",
		s.Seeds, time.Since(s.start).Round(time.Second), s.Skipped, s.Histories, s.Requests, len(s.Failures), len(s.Undecided))
	section := func(title string, m map[string]int) {
		if len(m) == 0 {
			return
		}
		total := 0
		for _, n := range m {
			total += n
		}
		fmt.Fprintf(&b, "%s (%d):\n", title, total)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(&b, "  %6d  %s\n", m[k], k)
		}
	}
	section("combinations run", s.Combos)
	section("faults applied", s.Faults)
	section("combinations skipped", s.Refused)
	section("clients' errors", s.Errors)
	if len(s.Undecided) > 0 {
		b.WriteString("not decided in time:\n")
		for _, u := range s.Undecided {
			b.WriteString("  " + u + "\n")
		}
	}
	if len(s.Failures) > 0 {
		b.WriteString("failures:\n")
		for _, f := range s.Failures {
			b.WriteString("  " + f + "\n")
		}
	}
	return b.String()
}
