package faults

import (
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
)

// TestSummaryCountsUndecidedApart: a store's history the checker did not
// decide in time is neither a failure nor counted as shown linearizable
// without a word: the headline gives the number, and a line names the
// seed and its keys; a history shown not linearizable stays a failure.
func TestSummaryCountsUndecidedApart(t *testing.T) {
	s := newSummary()
	store := Combo{Redis: true, Store: true, Ejection: "none", Source: "static", Copies: 1, Algorithm: "ring"}
	s.add(&run{seed: 1, combo: store, applied: map[string]int{}}, result{store: true, lin: porcupine.Ok})
	s.add(&run{seed: 2, combo: store, applied: map[string]int{}}, result{store: true, lin: porcupine.Unknown,
		linWhy: "not decided in time: 1 keys: f:3 (370 requests, 27 of unknown outcome)\n"})
	s.add(&run{seed: 3, combo: store, applied: map[string]int{}}, result{store: true, lin: porcupine.Illegal})
	out := s.String()
	head, _, _ := strings.Cut(out, "\n")
	if !strings.Contains(head, "3 histories checked") || !strings.Contains(head, "1 failed, 1 not decided in time") {
		t.Errorf("headline %q: want 3 histories, 1 failed, 1 not decided in time", head)
	}
	if !strings.Contains(out, "not decided in time:\n  seed 2 (") || !strings.Contains(out, "f:3 (370 requests, 27 of unknown outcome)") {
		t.Errorf("no line for seed 2's undecided key:\n%s", out)
	}
	if strings.Contains(out, "seed 1 (") || !strings.Contains(out, "failures:\n  seed 3 (") {
		t.Errorf("seed 1 listed, or seed 3 not a failure:\n%s", out)
	}
}
