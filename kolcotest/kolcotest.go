// Package kolcotest is the shared property suite every placement algorithm in
// this module runs: one call to [Run] checks the promises of the root
// interface ([kolco.Placement], [kolco.Mutable]) and the properties an
// algorithm declares in its [Algorithm] description.
//
// The properties come from Karger et al., "Consistent Hashing and Random
// Trees" (STOC 1997): determinism, minimal disruption on a membership change
// and balance, plus the module's own contract (replicas, errors, zero
// allocations, concurrent readers). All inputs are fixed, so a run is
// reproducible: a failure is never a fluke of the random seed.
package kolcotest

import (
	"fmt"
	"math"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
)

// Algorithm describes a placement algorithm and the promises it makes.
// Only Name and New are required; every other zero value turns a check off
// or selects a default.
type Algorithm struct {
	// Name is used in failure messages.
	Name string

	// New builds a placement from a node set. An empty set may either
	// succeed (lookups then return kolco.ErrNoNodes) or fail with an error
	// wrapping kolco.ErrNoNodes. If the result implements
	// kolco.Mutable, the Mutable checks run too.
	New func(nodes []kolco.Node) (kolco.Placement, error)

	// OrderIndependent promises that the same node set places every key
	// the same way whatever the order of the slice given to New and, for a
	// Mutable, whatever the order and grouping of Add calls that built
	// it, including after removals and re-adds.
	OrderIndependent bool

	// MinimalAdd promises that adding a node moves keys only onto it.
	MinimalAdd bool

	// MinimalRemove promises that removing any node (not only the last
	// added) moves only the keys it owned.
	MinimalRemove bool

	// Weighted promises that Node.Weight is honoured: key shares are
	// proportional to weights within WeightTolerance. An algorithm that is
	// not weighted must reject a weight other than 1 with an error wrapping
	// kolco.ErrBadWeight or ignore it; the suite accepts either.
	Weighted bool

	// WeightTolerance is the allowed relative error of a weighted share
	// (|observed/expected - 1|), before sampling noise. Zero means 0.05.
	WeightTolerance float64

	// Balance returns the documented bound on max/avg key load with equal
	// weights at the given node count, for an infinite number of keys (1
	// is perfect balance). The suite multiplies it by a sampling allowance
	// for the finite key set (see [SamplingAllowance]). Nil skips the
	// balance check.
	Balance func(nodes int) float64

	// FairShare promises that adding an 11th node to 10 moves 1/11 of
	// the keys, and that removing one of the 11 at random moves its own
	// share of the keys, also 1/11, each within one percentage point.
	FairShare bool

	// Undo promises that undoing the last change restores the placement
	// exactly: removing the node just added, or adding back the node just
	// removed, with nothing in between, gives every key its owner and
	// replica list back, and leaves the same fingerprint and state, so
	// that later changes go on as if nothing had happened.
	Undo bool

	// MaxMovedUndo is a loose upper bound on the share of keys an undone
	// change moves, for algorithms that do not promise Undo. The share is
	// always measured and logged. Zero means no bound.
	MaxMovedUndo float64

	// MaxMovedAdd and MaxMovedRemove are loose upper bounds on the share of
	// keys that move when one node is added to, or removed from, a set of
	// 10, for algorithms that do not promise minimal disruption. The share
	// is always measured and logged. Zero means no bound.
	MaxMovedAdd, MaxMovedRemove float64

	// SkipAllocs skips the zero-allocation check, for a build in which
	// lookups are known to allocate (such as a purego twin of unsafe code).
	SkipAllocs bool

	// MaxNodes is the largest node count the algorithm supports; larger
	// balance sizes are skipped and the Mutable checks stay within it.
	// Zero means no limit.
	MaxNodes int

	// Errors lists sentinel errors of the algorithm's own package that a
	// membership change may return besides the root ones (such as a
	// capacity error); [Ops] accepts them.
	Errors []error

	// NewHashed builds the placement with the key hash given, in the
	// configuration the hash matrix checks (11 nodes of several name
	// shapes, 200,000 keys, every hash of package keyhash) against
	// MaxOverMean and MinOverMean. Nil skips the matrix.
	NewHashed func(nodes []kolco.Node, hash keyhash.Func) (kolco.Placement, error)

	// MaxOverMean and MinOverMean bound the largest and the smallest
	// node's load relative to the mean in the hash matrix, from the
	// algorithm's theory, sampling noise included.
	MaxOverMean, MinOverMean float64

	// Owners, when set, is how the algorithm places a set of keys, as the
	// indexes in Nodes of their owners, in place of Locate: the hash matrix
	// measures it (bounded's static allocation).
	Owners func(p kolco.Placement, keys []string) ([]int, error)

	// Shares, when set, returns each node's expected share of uniformly
	// hashed keys by ID, for an algorithm whose theory gives shares that
	// depend on the node set (multiprobe's): the hash matrix then checks
	// every node's load against its share, within sampling noise.
	Shares func(p kolco.Placement) map[string]float64

	// Restore rebuilds a placement over nodes from the state its
	// MarshalState returned, as the package's Restore does. It is required
	// when the placement implements kolco.StateMarshaler.
	Restore func(nodes []kolco.Node, state []byte) (kolco.Placement, error)
}

// Run runs the whole suite as subtests of t:
//
//   - Empty: New(nil) fails with kolco.ErrNoNodes or gives lookups that do.
//   - BadNodes: New rejects empty IDs, duplicates and bad weights with the
//     matching sentinel.
//   - Determinism: two instances built alike agree on every key, twice.
//     Here and wherever the suite looks keys up, LocateID and LocateIndex
//     (if implemented) must name Locate's owner: the ID, and its position
//     in Nodes.
//   - Payload: Nodes is sorted, a copy, and carries Addr; so does Locate.
//   - Replicas: LocateN is distinct, starts with Locate, grows by
//     extension (n is a prefix of n+1), returns every node once for n above
//     the node count, and appends to dst.
//   - BadCount: n < 1 fails with kolco.ErrBadCount.
//   - OrderIndependence (if promised): shuffled slices and, for a
//     Mutable, shuffled Add calls with a removal and re-add give the
//     same placement.
//   - DisruptionAdd, DisruptionRemove: keys move only onto an added node and
//     only off a removed one (first, middle, last), if promised, plus a
//     40-step add/remove churn for a Mutable; the moved share is
//     always logged and held to MaxMovedAdd/MaxMovedRemove if set.
//   - FairShare (if promised): 10 -> 11 nodes moves 1/11 of the keys, and
//     removing a random one of the 11 moves its share, 1/11, each within
//     a percentage point.
//   - Undo (for a Mutable): removing the node just added, adding back the
//     node just removed, and two adds undone in reverse order, on a fresh
//     placement and along a random history, restore owners, replica
//     lists, fingerprint and state, if promised; the moved share is
//     always logged and held to MaxMovedUndo if set.
//   - Balance: max/avg load at 10, 100 and 1000 nodes within Balance times
//     [SamplingAllowance].
//   - HashBalance: with every hash of package keyhash, over 11 nodes of
//     each of [NodeShapes] and 200,000 keys, the largest and smallest loads
//     stay within MaxOverMean and MinOverMean (and each node's load near
//     its expected share, where Shares gives one).
//   - Weights: shares follow weights (also after Reweight), or weights are
//     rejected or ignored by an unweighted algorithm.
//   - ZeroAllocs: Locate, LocateID, LocateIndex and LocateN into a slice
//     with room allocate nothing.
//   - Mutable (if implemented): every failed change, Apply's mixed ones
//     included, wraps the right sentinel and changes nothing; removing
//     every node gives kolco.ErrNoNodes; applying the Diff to a target
//     gives exactly its nodes; a new address or zone moves no key; readers
//     run against a writer and see only whole states (use -race).
//   - History (if kolco.StateMarshaler is implemented): along a history of
//     changes, a placement restored from the state places every key as the
//     one that lived through it, encodes the same state, has the same
//     fingerprint, and stays alike under the same later changes.
//   - Fingerprint (if kolco.Identity is implemented): over placements
//     built by many random histories, two fingerprints are equal exactly
//     when the placements agree on a large sample of keys and replica
//     lists; a new address changes no fingerprint.
func Run(t *testing.T, a Algorithm) {
	t.Helper()
	if a.New == nil {
		t.Fatal("kolcotest: Algorithm.New is nil")
	}
	if a.WeightTolerance == 0 {
		a.WeightTolerance = 0.05
	}
	t.Run("Empty", func(t *testing.T) { testEmpty(t, a) })
	t.Run("BadNodes", func(t *testing.T) { testBadNodes(t, a) })
	t.Run("Determinism", func(t *testing.T) { testDeterminism(t, a) })
	t.Run("Payload", func(t *testing.T) { testPayload(t, a) })
	t.Run("Replicas", func(t *testing.T) { testReplicas(t, a) })
	t.Run("BadCount", func(t *testing.T) { testBadCount(t, a) })
	t.Run("OrderIndependence", func(t *testing.T) { testOrder(t, a) })
	t.Run("DisruptionAdd", func(t *testing.T) { testDisruptionAdd(t, a) })
	t.Run("DisruptionRemove", func(t *testing.T) { testDisruptionRemove(t, a) })
	t.Run("FairShare", func(t *testing.T) { testFairShare(t, a) })
	t.Run("Undo", func(t *testing.T) { testUndo(t, a) })
	t.Run("Balance", func(t *testing.T) { testBalance(t, a) })
	t.Run("HashBalance", func(t *testing.T) { testHashBalance(t, a) })
	t.Run("Weights", func(t *testing.T) { testWeights(t, a) })
	t.Run("ZeroAllocs", func(t *testing.T) { testAllocs(t, a) })
	t.Run("Mutable", func(t *testing.T) { testMutable(t, a) })
	t.Run("History", func(t *testing.T) { testHistory(t, a) })
	t.Run("Fingerprint", func(t *testing.T) { testFingerprint(t, a) })
}

// Nodes returns n valid nodes with IDs "node-0", "node-1", ... and an Addr
// derived from the ID, all of weight 0 (read as 1).
func Nodes(n int) []kolco.Node {
	nodes := make([]kolco.Node, n)
	for i := range nodes {
		id := fmt.Sprintf("node-%d", i)
		nodes[i] = kolco.Node{ID: id, Addr: addrOf(id)}
	}
	return nodes
}

// Keys returns n distinct keys "key:0", "key:1", ...
func Keys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key:%d", i)
	}
	return keys
}

// SamplingAllowance is the factor by which the suite widens an algorithm's
// balance bound for n nodes that get perNode keys each on average: the
// maximum of n Poisson(perNode) loads stays below
// 1 + sqrt(2 ln n / perNode) + 1.5/sqrt(perNode) times the mean for the
// sizes the suite uses.
func SamplingAllowance(n int, perNode float64) float64 {
	return 1 + math.Sqrt(2*math.Log(float64(n))/perNode) + 1.5/math.Sqrt(perNode)
}

// scaled returns n, or a quarter of it under -race: the race detector is
// there for the concurrency checks, and the statistical checks keep their
// meaning with fewer keys (their tolerances widen with the sample).
func scaled(n int) int {
	if raceEnabled {
		return max(1, n/4)
	}
	return n
}

func addrOf(id string) string { return "addr-of-" + id }

func build(t *testing.T, a Algorithm, nodes []kolco.Node) kolco.Placement {
	t.Helper()
	p, err := a.New(nodes)
	if err != nil {
		t.Fatalf("%s: New(%d nodes): %v", a.Name, len(nodes), err)
	}
	return p
}

// placement returns the owner ID of every key, checking on the way that
// LocateID and LocateIndex, where p has them, agree with Locate.
func placement(t *testing.T, p kolco.Placement, keys []string) []string {
	t.Helper()
	out := make([]string, len(keys))
	nodes := p.Nodes()
	for i, k := range keys {
		n, err := p.Locate(k)
		if err != nil {
			t.Fatalf("Locate(%q): %v", k, err)
		}
		out[i] = n.ID
		checkLocators(t, p, k, n.ID, nodes)
	}
	return out
}

// moved returns how many keys have different owners in before and after.
func moved(before, after []string) int {
	c := 0
	for i := range before {
		if before[i] != after[i] {
			c++
		}
	}
	return c
}

// equalPlacement fails t, showing the first few differences, unless want
// and got give every key the same owner.
func equalPlacement(t *testing.T, what string, want, got []string, keys []string) {
	t.Helper()
	bad := 0
	for i := range want {
		if want[i] != got[i] {
			if bad < 3 {
				t.Errorf("%s: key %q on %q, want %q", what, keys[i], got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d keys differ", what, bad, len(keys))
	}
}

func without(nodes []kolco.Node, id string) []kolco.Node {
	out := make([]kolco.Node, 0, len(nodes))
	for _, n := range nodes {
		if n.ID != id {
			out = append(out, n)
		}
	}
	return out
}

// Fingerprint returns a 64-bit FNV-1a digest of the owners of the keys
// "key:0" .. "key:<keys-1>" (their IDs, each followed by a zero byte), for
// pinned golden values that catch any change of placement between
// releases, processes or machines.
func Fingerprint(p kolco.Placement, keys int) (uint64, error) {
	h := uint64(14695981039346656037)
	for _, k := range Keys(keys) {
		n, err := p.Locate(k)
		if err != nil {
			return 0, err
		}
		for i := 0; i < len(n.ID); i++ {
			h = (h ^ uint64(n.ID[i])) * 1099511628211
		}
		h *= 1099511628211 // the zero byte: h ^ 0 == h
	}
	return h, nil
}
