package fleet

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// TestCompareAllAgree: reports with one fingerprint agree, a stale one
// among them too (staleness is not disagreement), and the reference's
// Since is the earliest.
func TestCompareAllAgree(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := Compare([]Report{
		{Name: "a", Fingerprint: "f1", Revision: 7, Since: t0.Add(2 * time.Second)},
		{Name: "b", Fingerprint: "f1", Revision: 7, Since: t0},
		{Name: "c", Fingerprint: "f1", Revision: 7, Since: t0.Add(time.Second), Stale: true},
	})
	if !a.Agree() || a.Fingerprint != "f1" || a.Revision != 7 || !a.Since.Equal(t0) {
		t.Fatalf("%+v: want agreement on f1 at 7 since %v", a, t0)
	}
	if !slices.Equal(a.Agreeing, []string{"a", "b", "c"}) || !slices.Equal(a.Stale, []string{"c"}) {
		t.Errorf("agreeing %v, stale %v", a.Agreeing, a.Stale)
	}
}

// TestCompareNamesTheOneThatDiffers: the fingerprint most report is the
// reference; the other is named, with the time its difference began.
func TestCompareNamesTheOneThatDiffers(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := Compare([]Report{
		{Name: "a", Fingerprint: "new", Revision: 9, Since: t0.Add(5 * time.Second)},
		{Name: "b", Fingerprint: "old", Revision: 8, Since: t0},
		{Name: "c", Fingerprint: "new", Revision: 9, Since: t0.Add(6 * time.Second)},
	})
	if a.Agree() || a.Fingerprint != "new" || len(a.Differing) != 1 {
		t.Fatalf("%+v: want b differing from new", a)
	}
	d := a.Differing[0]
	if d.Name != "b" || d.Fingerprint != "old" || !d.Since.Equal(t0.Add(5*time.Second)) {
		t.Errorf("difference %+v: want b on old since the first change to new", d)
	}
}

// TestCompareTieTakesHigherRevision: of two fingerprints as common, the
// one at the higher revision is the reference.
func TestCompareTieTakesHigherRevision(t *testing.T) {
	a := Compare([]Report{
		{Name: "a", Fingerprint: "old", Revision: 3},
		{Name: "b", Fingerprint: "new", Revision: 4},
	})
	if a.Fingerprint != "new" || len(a.Differing) != 1 || a.Differing[0].Name != "a" {
		t.Errorf("%+v: want new as the reference, a differing", a)
	}
}

// TestCompareUnreachable: a process that could not be asked is no
// agreement, and none answering gives no reference.
func TestCompareUnreachable(t *testing.T) {
	down := errors.New("connection refused")
	a := Compare([]Report{{Name: "a", Fingerprint: "f"}, {Name: "b", Err: down}})
	if a.Agree() || len(a.Unreachable) != 1 || a.Unreachable[0].Name != "b" || !slices.Equal(a.Agreeing, []string{"a"}) {
		t.Errorf("%+v: want a agreeing alone, b unreachable", a)
	}
	if none := Compare([]Report{{Name: "b", Err: down}}); none.Agree() || none.Fingerprint != "" {
		t.Errorf("none answering: %+v", none)
	}
	if empty := Compare(nil); empty.Agree() {
		t.Error("no reports: agreement")
	}
}
