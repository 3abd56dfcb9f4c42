package fleet

import (
	"cmp"
	"slices"
	"time"
)

// Report is what one process of a fleet (a proxy, a client) says about
// its placement of one pool or membership, as a fleet-wide status
// compares them: the fields of a [PoolStatus], or of a follower's status
// in package membership, that decide agreement.
type Report struct {
	// Name is how the caller names the process, such as its admin
	// address.
	Name string
	// Fingerprint and Revision are those of the placement it uses.
	Fingerprint string
	Revision    int64
	// Since is when it began placing by Fingerprint.
	Since time.Time
	// Stale reports that its view may be behind its store.
	Stale bool
	// Err is why the process could not be asked; the fields above are
	// then unset.
	Err error
}

// Agreement is the outcome of comparing the reports of a fleet.
type Agreement struct {
	// Fingerprint is the reference: the one most processes report; of
	// two as common, the one of the higher revision, then the one in
	// place since earlier. Empty when no process answered.
	Fingerprint string
	Revision    int64
	// Since is the earliest time a process began placing by Fingerprint.
	Since time.Time
	// Agreeing names the processes that report Fingerprint.
	Agreeing []string
	// Differing are the processes that report another fingerprint.
	Differing []Difference
	// Unreachable are the processes that could not be asked.
	Unreachable []Report
	// Stale names the processes that answered with a view that may be
	// behind their store, agreeing or not.
	Stale []string
}

// Difference is a process whose placement differs from the reference.
type Difference struct {
	Report
	// Since is when the difference began: the later of the time the
	// process began placing by its fingerprint and the time the first
	// process began placing by the reference.
	Since time.Time
}

// Agree reports whether every process was asked and all report the same
// fingerprint. Staleness is not disagreement: a stale process still
// places as the others do.
func (a Agreement) Agree() bool {
	return len(a.Agreeing) > 0 && len(a.Differing) == 0 && len(a.Unreachable) == 0
}

// Compare compares the reports of a fleet, in the order given.
func Compare(reports []Report) Agreement {
	type group struct {
		fp    string
		n     int
		rev   int64
		since time.Time
	}
	var groups []*group
	var a Agreement
	for _, r := range reports {
		if r.Err != nil {
			a.Unreachable = append(a.Unreachable, r)
			continue
		}
		if r.Stale {
			a.Stale = append(a.Stale, r.Name)
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return g.fp == r.Fingerprint })
		if i < 0 {
			groups = append(groups, &group{fp: r.Fingerprint, rev: r.Revision, since: r.Since})
			i = len(groups) - 1
		}
		g := groups[i]
		g.n++
		g.rev = max(g.rev, r.Revision)
		if r.Since.Before(g.since) {
			g.since = r.Since
		}
	}
	if len(groups) == 0 {
		return a
	}
	ref := slices.MaxFunc(groups, func(x, y *group) int {
		return cmp.Or(cmp.Compare(x.n, y.n), cmp.Compare(x.rev, y.rev), y.since.Compare(x.since))
	})
	a.Fingerprint, a.Revision, a.Since = ref.fp, ref.rev, ref.since
	for _, r := range reports {
		switch {
		case r.Err != nil:
		case r.Fingerprint == ref.fp:
			a.Agreeing = append(a.Agreeing, r.Name)
		default:
			since := r.Since
			if ref.since.After(since) {
				since = ref.since
			}
			a.Differing = append(a.Differing, Difference{Report: r, Since: since})
		}
	}
	return a
}
