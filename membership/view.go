package membership

import (
	"slices"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
)

// View is one placement a [Follower] published: immutable, so that a
// reader holding it sees the placement, its nodes and its revision
// together however many changes follow.
type View struct {
	// Placement places keys; it is never changed once published.
	Placement algo.Placement
	// Revision is that of the version applied; 0 before the first.
	Revision int64
	// Fingerprint is kolco.Fingerprint of Placement: equal for two views
	// exactly when they place every key alike.
	Fingerprint string
	// Nodes are the nodes that take keys, sorted by ID; Drained the
	// nodes the store lists that take none.
	Nodes, Drained []kolco.Node
	// AppliedAt is when the view was published.
	AppliedAt time.Time
	// Shared reports that another follower of the same store builds the
	// same placement at this revision, however late it started: always
	// for a history-independent algorithm; for a history-dependent one,
	// when the store keeps its state (see [PlacementState]).
	Shared bool

	replaced chan struct{}
}

// Replaced returns a channel closed when a newer view replaces this one.
func (v *View) Replaced() <-chan struct{} { return v.replaced }

// FollowerStatus is what a follower reports about itself: its placement's
// revision, fingerprint and nodes, how current it is, and the local health
// beside them, in a JSON form fit for an admin endpoint. Followers agree
// when their fingerprints are equal (package fleet compares them); a
// difference in Down alone is local health, not a disagreement about
// membership.
type FollowerStatus struct {
	// Algorithm is the placement algorithm's name.
	Algorithm string `json:"algorithm"`
	// Revision and Fingerprint are those of the current view.
	Revision    int64  `json:"revision"`
	Fingerprint string `json:"fingerprint"`
	// Nodes are the nodes that take keys; Drained those listed that take
	// none.
	Nodes   []FollowerStatusNode `json:"nodes"`
	Drained []FollowerStatusNode `json:"drained,omitempty"`
	// Down lists the nodes this process treats as down (see
	// [Follower.SetDown]). The fingerprint does not cover it.
	Down []string `json:"down,omitempty"`
	// AppliedAt is when the current view was published.
	AppliedAt time.Time `json:"applied_at"`
	// Stale reports that the view may be behind the store: the store has
	// not answered yet, cannot be reached, gave content the source
	// refuses, or a version the follower could not apply. Error says why.
	Stale bool   `json:"stale"`
	Error string `json:"error,omitempty"`
	// LastAnswer is when the store last answered; zero if it never did.
	LastAnswer time.Time `json:"last_answer"`
	// Shared is the view's [View].Shared.
	Shared bool `json:"shared"`
	// Versions counts the versions the watch handed on; Resyncs the full
	// re-reads after a gap among them; Adopted the views that took the
	// store's placement state instead of the applied change; StatesWritten
	// the placement states this follower wrote back.
	Versions      int64 `json:"versions"`
	Resyncs       int64 `json:"resyncs"`
	Adopted       int64 `json:"adopted"`
	StatesWritten int64 `json:"states_written"`
}

// FollowerStatusNode is a node in a [FollowerStatus].
type FollowerStatusNode struct {
	ID     string  `json:"id"`
	Weight float64 `json:"weight"`
	Zone   string  `json:"zone,omitempty"`
	Addr   string  `json:"addr,omitempty"`
}

func statusNodes(nodes []kolco.Node) []FollowerStatusNode {
	out := make([]FollowerStatusNode, len(nodes))
	for i, n := range nodes {
		out[i] = FollowerStatusNode{ID: n.ID, Weight: n.EffectiveWeight(), Zone: n.Zone, Addr: n.Addr}
	}
	return out
}

// Report returns what the follower reports about itself now.
func (f *Follower) Report() FollowerStatus {
	v := f.view.Load()
	st := f.w.Status()
	f.mu.Lock()
	refused, writeErr, adopted, written := f.refused, f.writeErr, f.adopted, f.written
	f.mu.Unlock()
	s := FollowerStatus{
		Algorithm:     f.cfg.Algorithm,
		Revision:      v.Revision,
		Fingerprint:   v.Fingerprint,
		Nodes:         statusNodes(v.Nodes),
		Down:          slices.Clone(*f.down.Load()),
		AppliedAt:     v.AppliedAt,
		LastAnswer:    st.LastAnswer,
		Shared:        v.Shared,
		Versions:      st.Versions,
		Resyncs:       st.Resyncs,
		Adopted:       adopted,
		StatesWritten: written,
	}
	if len(v.Drained) > 0 {
		s.Drained = statusNodes(v.Drained)
	}
	err := st.Err
	if refused != nil {
		err = refused
	}
	s.Stale = err != nil || st.LastAnswer.IsZero()
	switch {
	case err != nil:
		s.Error = err.Error()
	case writeErr != nil:
		s.Error = "writing the placement state back: " + writeErr.Error()
	case st.LastAnswer.IsZero():
		s.Error = "no answer from the store yet"
	}
	return s
}
