package plan_test

import (
	"math"
	"testing"

	"github.com/kolco-dev/kolco/sim/plan"
)

func TestDatabaseLoad(t *testing.T) {
	// Nothing cold: the steady miss rate. Everything cold: every request.
	if got := plan.DatabaseLoad(1000, 0.9, 0); math.Abs(got-100) > 1e-9 {
		t.Errorf("no cold keys: %v, want 100", got)
	}
	if got := plan.DatabaseLoad(1000, 0.9, 1); got != 1000 {
		t.Errorf("all keys cold: %v, want 1000", got)
	}
}
