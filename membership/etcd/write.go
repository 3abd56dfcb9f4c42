package etcd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
)

// ErrBadChange is wrapped for an [Edit] that cannot be applied as given:
// an ID named twice, a node that is not valid, nothing to change.
var ErrBadChange = errors.New("etcd: bad change")

// Edit is one edit of the membership a store keeps, written in one
// transaction: it applies wholly or not at all, and a watch sees it as one
// revision. It is a [kolco.Change] of the listed nodes with the store's own
// parts beside it: nodes kept listed but out of placement, and the
// placement state. Unlike a kolco.Change, an edit names each ID once
// across all its lists ([ErrBadChange] otherwise), so that the order of
// its parts never matters.
type Edit struct {
	// Change removes, adds and updates listed nodes. An added ID already
	// listed (drained or not) fails the edit with
	// [kolco.ErrDuplicateNode]; a removed or updated ID not listed, with
	// [kolco.ErrUnknownNode]. Remove takes drained nodes too, and may name
	// a key whose value is refused, to clear it away. Update sets the
	// weight, zone and address of a node, which keeps its drained flag and
	// its lease.
	kolco.Change
	// Drain takes listed nodes out of placement: they stay listed, with
	// their address, so that an operator can put them back (Undrain) and
	// a proxy can still read what they hold while their keys move.
	Drain []string
	// Undrain puts drained nodes back into placement.
	Undrain []string
	// State, when not nil, replaces the stored placement state: the
	// encoding of a [membership.PlacementState], refused with
	// [ErrBadChange] otherwise. Without State or ClearState, a change of
	// the nodes that take keys replaces a stored state with the next one
	// ([membership.PlacementState.Next]), computed from the state and
	// written in the same transaction.
	State []byte
	// ClearState removes the stored placement state.
	ClearState bool
}

// Empty reports whether c has nothing to write: the promoted
// [kolco.Change.Empty] alone would miss the store's own parts.
func (c Edit) Empty() bool {
	return c.Change.Empty() && len(c.Drain) == 0 && len(c.Undrain) == 0 && c.State == nil && !c.ClearState
}

// validate checks the change on its own; the error wraps [ErrBadChange].
func (c Edit) validate() error {
	_, err := c.ids()
	return err
}

// ids lists every ID the change touches, failing for one named twice.
func (c Edit) ids() ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	add := func(id string) error {
		if err := checkName("ID", id); err != nil {
			return fmt.Errorf("%w: %q: %w", ErrBadChange, id, err)
		}
		if seen[id] {
			return fmt.Errorf("%w: %w: %q named twice", ErrBadChange, kolco.ErrDuplicateNode, id)
		}
		seen[id] = true
		ids = append(ids, id)
		return nil
	}
	for _, list := range [][]kolco.Node{c.Add, c.Update} {
		for _, n := range list {
			if err := n.Validate(); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrBadChange, err)
			}
			if err := add(n.ID); err != nil {
				return nil, err
			}
			if _, err := ParseValue(n.ID, EncodeValue(Member{Node: n})); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrBadChange, err)
			}
		}
	}
	for _, list := range [][]string{c.Remove, c.Drain, c.Undrain} {
		for _, id := range list {
			if err := add(id); err != nil {
				return nil, err
			}
		}
	}
	if c.State != nil && c.ClearState {
		return nil, fmt.Errorf("%w: state both set and cleared", ErrBadChange)
	}
	if c.State != nil {
		if _, err := membership.ParsePlacementState(c.State); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadChange, err)
		}
	}
	if c.Empty() {
		return nil, fmt.Errorf("%w: nothing to change", ErrBadChange)
	}
	return ids, nil
}

// Apply writes c as of revision rev, the revision of the listing it was
// computed from, and returns the revision of the write. It fails with
// [membership.ErrConflict] if anything under the prefix changed after rev
// (or rev was compacted away), and writes nothing; a node of the change
// whose lease expired after rev is such a change. When the store keeps a
// placement state, a change of the nodes that take keys writes the next
// state with them (see [Edit].State), so that the state stays current.
// Other errors wrap [ErrBadChange], [kolco.ErrDuplicateNode],
// [kolco.ErrUnknownNode], [membership.ErrUnreachable], the error of the
// stored placement's algorithm for a change it cannot make (a weight
// other than 1 for jump, a full capacity for anchor), or
// [membership.ErrBadContent] for a stored state that cannot be read.
func (s *Store) Apply(ctx context.Context, rev int64, c Edit) (int64, error) {
	if err := c.validate(); err != nil {
		return 0, err
	}
	st, err := s.read(ctx, rev)
	if errors.Is(err, rpctypes.ErrCompacted) {
		return 0, fmt.Errorf("%w: revision %d compacted", membership.ErrConflict, rev)
	}
	if err != nil {
		return 0, err
	}
	ops, cmps, after, err := s.ops(st, c)
	if err != nil {
		return 0, err
	}
	if c.State == nil && !c.ClearState && st.state != nil {
		state, err := nextState(st.state, after)
		if err != nil {
			return 0, fmt.Errorf("etcd %s: %w", s.prefix, err)
		}
		if state != nil {
			ops = append(ops, clientv3.OpPut(s.prefix+stateKey, string(state)))
		}
	}
	// Nothing under the prefix written after rev; ops touches the
	// changed key so that this removal shows in later guards too.
	cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(s.prefix), "<", rev+1).WithPrefix())
	ops = append(ops, clientv3.OpPut(s.prefix+changedKey, time.Now().UTC().Format(time.RFC3339Nano)))
	cli, err := s.client()
	if err != nil {
		return 0, err
	}
	rctx, cancel := s.request(ctx)
	defer cancel()
	resp, err := cli.Txn(rctx).If(cmps...).Then(ops...).Commit()
	if err != nil {
		return 0, s.unreachable(err)
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("%w: %s changed after revision %d", membership.ErrConflict, s.prefix, rev)
	}
	return resp.Header.Revision, nil
}

// ops returns the operations of c on the membership st, the comparisons
// that hold while each touched key is as st saw it, and the members after
// c.
func (s *Store) ops(st *state, c Edit) ([]clientv3.Op, []clientv3.Cmp, map[string]Member, error) {
	t := &editTxn{s: s, st: st, after: maps.Clone(st.members)}
	for _, n := range c.Add {
		_, listed := st.members[n.ID]
		if _, bad := st.invalid[n.ID]; listed || bad {
			return nil, nil, nil, fmt.Errorf("%w: %q at revision %d", kolco.ErrDuplicateNode, n.ID, st.rev)
		}
		t.cmps = append(t.cmps, clientv3.Compare(clientv3.CreateRevision(t.key(n.ID)), "=", 0))
		t.put(Member{Node: n})
	}
	for _, id := range c.Remove {
		if r, bad := st.invalid[id]; bad {
			t.cmps = append(t.cmps, clientv3.Compare(clientv3.ModRevision(t.key(id)), "=", r.revision))
		} else if _, err := t.existing(id); err != nil {
			return nil, nil, nil, err
		}
		t.ops = append(t.ops, clientv3.OpDelete(t.key(id)))
		delete(t.after, id)
	}
	for _, n := range c.Update {
		m, err := t.existing(n.ID)
		if err != nil {
			return nil, nil, nil, err
		}
		m.Node = n
		t.put(m)
	}
	for _, d := range []struct {
		ids     []string
		drained bool
	}{{c.Drain, true}, {c.Undrain, false}} {
		for _, id := range d.ids {
			m, err := t.existing(id)
			if err != nil {
				return nil, nil, nil, err
			}
			m.Drained = d.drained
			t.put(m)
		}
	}
	switch {
	case c.State != nil:
		t.ops = append(t.ops, clientv3.OpPut(s.prefix+stateKey, string(c.State)))
	case c.ClearState:
		t.ops = append(t.ops, clientv3.OpDelete(s.prefix+stateKey))
	}
	return t.ops, t.cmps, t.after, nil
}

// editTxn is an edit's transaction as it is built: its operations, the
// comparisons that hold while each key it touches is as st saw it, and
// the members after it.
type editTxn struct {
	s     *Store
	st    *state
	ops   []clientv3.Op
	cmps  []clientv3.Cmp
	after map[string]Member
}

// key returns the key of the node id.
func (t *editTxn) key(id string) string { return t.s.prefix + nodesKey + id }

// existing returns the member id as st saw it, and holds the transaction
// to its revision. The error wraps kolco.ErrUnknownNode.
func (t *editTxn) existing(id string) (Member, error) {
	m, ok := t.st.members[id]
	if !ok {
		return m, fmt.Errorf("%w: %q at revision %d", kolco.ErrUnknownNode, id, t.st.rev)
	}
	t.cmps = append(t.cmps, clientv3.Compare(clientv3.ModRevision(t.key(id)), "=", m.Revision))
	return m, nil
}

// put writes m, with its lease.
func (t *editTxn) put(m Member) {
	var opts []clientv3.OpOption
	if m.Lease != 0 {
		opts = append(opts, clientv3.WithLease(clientv3.LeaseID(m.Lease)))
	}
	t.ops = append(t.ops, clientv3.OpPut(t.key(m.ID), string(EncodeValue(m)), opts...))
	t.after[m.ID] = m
}

// nextState returns the placement state to store with a change that
// leaves members, computed from the stored one, or nil when it stays the
// same.
func nextState(stored []byte, members map[string]Member) ([]byte, error) {
	ps, err := membership.ParsePlacementState(stored)
	if err != nil {
		return nil, fmt.Errorf("the stored placement state (write a new one, or clear it, with the change): %w", err)
	}
	var nodes []kolco.Node
	for _, m := range members {
		if !m.Drained {
			nodes = append(nodes, m.Node)
		}
	}
	next, err := ps.Next(nodes)
	if err != nil {
		// err names the algorithm ("jump: node ..."); naming it here too
		// would say it twice.
		return nil, fmt.Errorf("the stored placement state refuses the change: %w", err)
	}
	if data := next.Marshal(); !bytes.Equal(data, stored) {
		return data, nil
	}
	return nil, nil
}

// Update reads the membership, asks fn for a change to it, and applies
// the change as of the revision read; when another write came first
// ([membership.ErrConflict]) it reads again and asks fn again, up to ten
// times. It returns the revision of the write, or fn's error.
func (s *Store) Update(ctx context.Context, fn func(Listing) (Edit, error)) (int64, error) {
	var conflict error
	for range 10 {
		ls, err := s.List(ctx)
		if err != nil {
			return 0, err
		}
		c, err := fn(ls)
		if err != nil {
			return 0, err
		}
		rev, err := s.Apply(ctx, ls.Revision, c)
		if !errors.Is(err, membership.ErrConflict) {
			return rev, err
		}
		conflict = err
	}
	return 0, conflict
}

var _ membership.StateWriter = (*Store)(nil)

// WriteState implements [membership.StateWriter]: it stores state, the
// encoding of a [membership.PlacementState], as of revision rev. Its
// errors are those of [Store.Apply].
func (s *Store) WriteState(ctx context.Context, rev int64, state []byte) error {
	if state == nil {
		return fmt.Errorf("%w: no state to write", ErrBadChange)
	}
	_, err := s.Apply(ctx, rev, Edit{State: state})
	return err
}
