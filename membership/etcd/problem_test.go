package etcd

import (
	"errors"
	"strings"
	"testing"
)

// TestProblemCountsInEnglish: the refused values beyond the first are
// counted with a noun that agrees, "1 more refused value".
func TestProblemCountsInEnglish(t *testing.T) {
	first := errors.New("first")
	for n, want := range map[int]string{2: "1 more refused value)", 3: "2 more refused values)"} {
		s := Listing{Invalid: make([]error, n)}
		for i := range s.Invalid {
			s.Invalid[i] = first
		}
		if err := s.problem(); !errors.Is(err, first) || !strings.Contains(err.Error(), want) {
			t.Errorf("%d refused: %v; want the first, and %q", n, err, want)
		}
	}
}
