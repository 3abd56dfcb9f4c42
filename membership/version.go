package membership

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kolco-dev/kolco"
)

// Sentinel errors. Sources wrap them with context; test for them with
// [errors.Is].
var (
	// ErrBadConfig is returned for a source set up wrongly: no path, an
	// unknown format, a missing name. Retrying does not mend it.
	ErrBadConfig = errors.New("membership: bad source configuration")
	// ErrBadContent is wrapped by every error about what a store holds: a
	// node file that does not parse, a malformed value in etcd, a DNS
	// answer that names no usable node. The message names the place.
	ErrBadContent = errors.New("membership: bad content")
	// ErrBadVersion is reported when a source hands a watcher a version
	// that is not valid or whose revision does not increase; the watcher
	// drops it.
	ErrBadVersion = errors.New("membership: invalid version")
	// ErrConflict is returned by a guarded write when the membership
	// changed after the revision the write was computed from; nothing was
	// written. Read again and retry.
	ErrConflict = errors.New("membership: changed since the revision read")
	// ErrUnreachable is wrapped when a source got no answer in time from
	// what it reads the membership from (etcd, a DNS server, Sentinels), or
	// a gossip member has not joined its pool.
	ErrUnreachable = errors.New("membership: source unreachable")
	// ErrStopped is returned by a wait on a [Follower] that has stopped.
	ErrStopped = errors.New("membership: follower stopped")
	// ErrUnordered is wrapped when a history-dependent algorithm is asked
	// to follow a source that gives no order of changes every follower
	// shares ([Unordered]).
	ErrUnordered = errors.New("membership: a history-dependent algorithm on a source without one order of changes")
)

// Version is one state of a membership: the nodes that take keys, at a
// revision.
type Version struct {
	// Revision orders the versions of a source: within one watch, each
	// version has a greater revision than the one before. For etcd it is
	// the store's revision as of which the set was read, the same in
	// every process; a file or DNS source numbers the distinct contents it
	// has seen from 1, so its revisions compare only within one watch.
	Revision int64
	// Nodes are the nodes that take keys, sorted by ID, valid and
	// distinct. It may be empty: the store holds no node.
	Nodes []kolco.Node
	// Drained are nodes the store lists but that take no keys (see
	// package membership/etcd), sorted by ID; nil for sources without
	// them. An ID is never in both lists.
	Drained []kolco.Node
	// State is the placement state stored beside the nodes, for
	// history-dependent algorithms: the encoding of a [PlacementState],
	// written with the nodes under one revision by the store's writers;
	// nil when the store holds none.
	State []byte
	// Resync is true when the version was read in full rather than
	// derived from the changes after the previous one: the first version
	// of a watch, and a re-read after a gap the store could not replay
	// (etcd's history compacted past the watch). Changes between the
	// previous version and this one are then not known one by one.
	Resync bool
}

// Validate reports whether v is a version a watcher may hand on: nodes
// and drained nodes valid, each sorted by ID, and no ID listed twice. The
// error wraps [ErrBadVersion] and, for a bad node, the sentinel of
// [kolco.Node.Validate] or [kolco.ErrDuplicateNode].
func (v Version) Validate() error {
	seen := make(map[string]bool, len(v.Nodes)+len(v.Drained))
	for _, list := range [][]kolco.Node{v.Nodes, v.Drained} {
		for i, n := range list {
			if err := n.Validate(); err != nil {
				return fmt.Errorf("%w: %w", ErrBadVersion, err)
			}
			if seen[n.ID] {
				return fmt.Errorf("%w: %w: %q", ErrBadVersion, kolco.ErrDuplicateNode, n.ID)
			}
			seen[n.ID] = true
			if i > 0 && list[i-1].ID >= n.ID {
				return fmt.Errorf("%w: nodes not sorted by ID (%q before %q)", ErrBadVersion, list[i-1].ID, n.ID)
			}
		}
	}
	return nil
}

// IDs returns the IDs of the nodes that take keys, in order.
func (v Version) IDs() []string {
	ids := make([]string, len(v.Nodes))
	for i, n := range v.Nodes {
		ids[i] = n.ID
	}
	return ids
}

// String returns a short description such as "revision 7: a, b, c".
func (v Version) String() string {
	s := fmt.Sprintf("revision %d: %s", v.Revision, strings.Join(v.IDs(), ", "))
	if len(v.Drained) > 0 {
		ids := make([]string, len(v.Drained))
		for i, n := range v.Drained {
			ids[i] = n.ID
		}
		s += " (drained: " + strings.Join(ids, ", ") + ")"
	}
	return s
}

// SortNodes sorts nodes by ID in place; sources use it before yielding.
func SortNodes(nodes []kolco.Node) {
	slices.SortFunc(nodes, func(a, b kolco.Node) int { return strings.Compare(a.ID, b.ID) })
}

// Source is a store of membership: a file, DNS, etcd. Implementations are
// safe for concurrent use.
type Source interface {
	// Read returns the current version once. The error wraps
	// [ErrBadContent] when the store holds something the source refuses,
	// [ErrUnreachable] when it did not answer in time, or ctx's error.
	Read(ctx context.Context) (Version, error)

	// Follow reports the current version and then each later one to r,
	// in revision order, until ctx is done, and then returns ctx's error.
	// It reports each answer of the store with r.Answered and each
	// failure to reach it with r.Failed, and keeps trying; it returns
	// earlier only with an error that retrying cannot mend (a bad
	// configuration, wrapping [ErrBadConfig]; a closed store). Follow
	// starts no goroutine that outlives it.
	Follow(ctx context.Context, r Reporter) error
}

// Unordered is implemented by a source whose followers do not all see one
// sequence of changes: each member of a gossip pool learns of joins and
// failures in its own order. [Follow] refuses history-dependent
// algorithms on such a source, since their placement depends on that
// order.
type Unordered interface {
	// Unordered says why the source's followers may see its changes in
	// different orders.
	Unordered() string
}

// Reporter receives what a [Source] finds while it follows its store. A
// [Watcher] is one; its methods are safe for concurrent use.
type Reporter interface {
	// Yield hands v on, blocking until the reader takes it or ctx is
	// done, when it returns ctx's error. A version that fails
	// [Version.Validate], or whose revision is not above the last one
	// yielded, is dropped and reported as the reason the view is stale.
	Yield(ctx context.Context, v Version) error
	// Answered records that the store answered just now. err is nil when
	// the answer leaves the view current, else why it does not (content
	// the source refuses, wrapping [ErrBadContent]).
	Answered(err error)
	// Failed records that the store could not be reached: the view is
	// stale for err until the next answer.
	Failed(err error)
}
