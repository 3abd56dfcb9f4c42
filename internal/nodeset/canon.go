package nodeset

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
)

// Placement states and identities are written in one canonical binary
// form: unsigned varints, and strings as a varint length and their bytes.
// A state starts with the header "kolco-state", its version and the
// algorithm's name; an identity with "kolco-identity" and its version. The
// form is canonical because every value has one encoding and every writer
// writes its values in one order, so equal states give equal bytes; a
// reader checks that by encoding what it read again (see Restore).

const (
	stateMagic      = "kolco-state"
	stateVersion    = 1
	identityMagic   = "kolco-identity"
	identityVersion = 1
)

// Writer appends values in the canonical form to B.
type Writer struct {
	B []byte
}

// Uint appends x as an unsigned varint.
func (w *Writer) Uint(x uint64) { w.B = binary.AppendUvarint(w.B, x) }

// String appends s as its length and its bytes.
func (w *Writer) String(s string) {
	w.Uint(uint64(len(s)))
	w.B = append(w.B, s...)
}

// Float appends the bits of x.
func (w *Writer) Float(x float64) { w.Uint(math.Float64bits(x)) }

// StateWriter returns a writer of a state of the algorithm name.
func StateWriter(name string) *Writer {
	w := &Writer{}
	w.String(stateMagic)
	w.Uint(stateVersion)
	w.String(name)
	return w
}

// Reader reads values in the canonical form. The first error sticks: every
// later read returns zero, and Err reports it.
type Reader struct {
	b   []byte
	err error
}

// StateReader returns a reader of data, a state of the algorithm name, past
// its header. The error wraps kolco.ErrBadState for another header.
func StateReader(name string, data []byte) (*Reader, error) {
	r := &Reader{b: data}
	if magic, v, got := r.String(), r.Uint(), r.String(); r.err != nil || magic != stateMagic || v != stateVersion || got != name {
		return nil, fmt.Errorf("%w: not a version %d state of %s", kolco.ErrBadState, stateVersion, name)
	}
	return r, nil
}

func (r *Reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", kolco.ErrBadState, what)
	}
}

// Uint reads an unsigned varint.
func (r *Reader) Uint() uint64 {
	if r.err != nil {
		return 0
	}
	x, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("truncated or overlong number")
		return 0
	}
	r.b = r.b[n:]
	return x
}

// Count reads a count of items of at least min bytes each, refusing one
// that the remaining input cannot hold, so that a corrupted count never
// makes a caller allocate more than the input's size.
func (r *Reader) Count(min int) int {
	n := r.Uint()
	if n > uint64(len(r.b)/max(min, 1)) {
		r.fail("count beyond the end of the state")
		return 0
	}
	return int(n)
}

// String reads a string.
func (r *Reader) String() string {
	n := r.Count(1)
	if r.err != nil {
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// Ok reports whether every read so far succeeded.
func (r *Reader) Ok() bool { return r.err == nil }

// Err returns the first error, which wraps kolco.ErrBadState, or one for
// bytes left over after the last value.
func (r *Reader) Err() error {
	if r.err == nil && len(r.b) > 0 {
		r.fail("bytes after the end")
	}
	return r.err
}

// CheckCanonical returns an error wrapping kolco.ErrBadState unless data,
// which restored a placement, is that placement's own encoding: a state
// restores only from the one form that MarshalState writes.
func CheckCanonical(data, encoded []byte) error {
	if !bytes.Equal(data, encoded) {
		return fmt.Errorf("%w: not in canonical form", kolco.ErrBadState)
	}
	return nil
}

// CheckIDs returns an error wrapping kolco.ErrBadState unless ids, read
// from a state, are exactly the IDs of set, each once.
func CheckIDs(ids []string, set Set) error {
	if len(ids) != set.Len() {
		return fmt.Errorf("%w: it holds %d nodes, the node set %d", kolco.ErrBadState, len(ids), set.Len())
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] || !set.Has(id) {
			return fmt.Errorf("%w: node %q is not in the node set, or named twice", kolco.ErrBadState, id)
		}
		seen[id] = true
	}
	return nil
}

// Identity appends to dst the identity of a placement of the algorithm
// name over nodes (sorted by ID), whose own part body writes. Placements
// of fewer than two nodes place every key alike whatever their algorithm
// (on the one node, or nowhere), so their identity is the node's ID alone
// and body is not called.
func Identity(dst []byte, name string, nodes []kolco.Node, body func(w *Writer) error) ([]byte, error) {
	w := &Writer{B: dst}
	w.String(identityMagic)
	w.Uint(identityVersion)
	if len(nodes) < 2 {
		w.IDs(nodes)
		return w.B, nil
	}
	w.Uint(2)
	w.String(name)
	if err := body(w); err != nil {
		return dst, err
	}
	return w.B, nil
}

// HashName writes the name of the hash f, or returns an error wrapping
// kolco.ErrBadConfig, prefixed with algo, when keyhash does not name it.
func (w *Writer) HashName(algo string, f keyhash.Func) error {
	name, ok := keyhash.Name(f)
	if !ok {
		return fmt.Errorf("%s: %w: the hash has no name in keyhash", algo, kolco.ErrBadConfig)
	}
	w.String(name)
	return nil
}

// IDs writes the number of nodes and their IDs, in their order.
func (w *Writer) IDs(nodes []kolco.Node) {
	w.Uint(uint64(len(nodes)))
	for _, n := range nodes {
		w.String(n.ID)
	}
}

// Weights writes the weights of nodes in canonical form: nothing but a
// zero when they are all equal (every algorithm then places as with weight
// 1), else a one and each weight scaled by the one power of two that
// brings the largest into [1, 2), which changes no comparison or ratio of
// weights.
func (w *Writer) Weights(nodes []kolco.Node) {
	equal, top := true, 0.0
	for _, n := range nodes {
		equal = equal && n.EffectiveWeight() == nodes[0].EffectiveWeight()
		top = max(top, n.EffectiveWeight())
	}
	if equal {
		w.Uint(0)
		return
	}
	w.Uint(1)
	_, exp := math.Frexp(top) // top = frac * 2^exp, frac in [0.5, 1)
	for _, n := range nodes {
		w.Float(math.Ldexp(n.EffectiveWeight(), 1-exp))
	}
}

// StateCapacity returns the capacity that a state of the algorithm name
// holds, its first number, for an algorithm of fixed capacity: within the
// algorithm's bounds (ok), equal to the configured capacity unless that is
// zero, and at least the node count. Every slot of such a state takes at
// least one byte, a free slot's number or a node's ID, which bounds the
// capacity by the state's size too. The error wraps kolco.ErrBadState.
func StateCapacity(name string, data []byte, configured, nodes int, ok func(c uint64) bool) (int, error) {
	r, err := StateReader(name, data)
	if err != nil {
		return 0, err
	}
	c := r.Uint()
	switch {
	case !r.Ok() || !ok(c) || c > uint64(len(data)):
		return 0, fmt.Errorf("%w: capacity %d out of range", kolco.ErrBadState, c)
	case configured != 0 && uint64(configured) != c:
		return 0, fmt.Errorf("%w: capacity %d, configured %d", kolco.ErrBadState, c, configured)
	case c < uint64(nodes):
		return 0, fmt.Errorf("%w: capacity %d, %d nodes", kolco.ErrBadState, c, nodes)
	}
	return int(c), nil
}
