package etcd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kolco-dev/kolco/membership"
)

// Listing is the whole membership as read at one revision.
type Listing struct {
	// Revision is the store revision the listing was read at.
	Revision int64
	// Members are the members, valid ones only, sorted by ID.
	Members []Member
	// State is the stored placement state (a
	// [membership.PlacementState]'s encoding), nil if none.
	State []byte
	// Invalid lists a problem for each key whose value is refused,
	// wrapping [membership.ErrBadContent]; a version is built only from a
	// listing without any.
	Invalid []error
}

// Version returns the listing as a version: members that take keys in
// Nodes, drained ones in Drained.
func (s Listing) Version() membership.Version {
	v := membership.Version{Revision: s.Revision, State: s.State}
	for _, m := range s.Members {
		if m.Drained {
			v.Drained = append(v.Drained, m.Node)
		} else {
			v.Nodes = append(v.Nodes, m.Node)
		}
	}
	return v
}

// Member returns the member with the given ID.
func (s Listing) Member(id string) (Member, bool) {
	i, ok := slices.BinarySearchFunc(s.Members, id, func(m Member, id string) int { return strings.Compare(m.ID, id) })
	if !ok {
		return Member{}, false
	}
	return s.Members[i], true
}

// List reads the whole membership. Values that do not parse are
// listed in Invalid, not returned as an error. The error wraps
// [membership.ErrUnreachable] when etcd did not answer in time.
func (s *Store) List(ctx context.Context) (Listing, error) {
	return s.listAt(ctx, 0)
}

// listAt reads the membership at rev, or at the latest revision when
// rev is 0.
func (s *Store) listAt(ctx context.Context, rev int64) (Listing, error) {
	st, err := s.read(ctx, rev)
	if err != nil {
		return Listing{}, err
	}
	return st.listing(), nil
}

// read reads the membership at rev, or at the latest revision when rev is
// 0, as the state a watch starts from.
func (s *Store) read(ctx context.Context, rev int64) (*state, error) {
	cli, err := s.client()
	if err != nil {
		return nil, err
	}
	ctx, cancel := s.request(ctx)
	defer cancel()
	opts := []clientv3.OpOption{clientv3.WithPrefix()}
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	resp, err := cli.Get(ctx, s.prefix, opts...)
	if err != nil {
		return nil, s.unreachable(err)
	}
	st := newState(s.prefix, resp.Header.Revision)
	for _, kv := range resp.Kvs {
		st.put(kv)
	}
	return st, nil
}

// unreachable wraps a request's error. When the request ran out of time,
// which is all gRPC says of a server it cannot reach, a plain connection
// to the first endpoint says why (refused, a certificate not trusted).
func (s *Store) unreachable(err error) error {
	if errors.Is(err, context.DeadlineExceeded) && s.cfg.Client == nil {
		err = fmt.Errorf("%w (%w)", err, s.probe())
	}
	return fmt.Errorf("%w: etcd %s: %w", membership.ErrUnreachable, s.where(), err)
}

// where names the store in messages.
func (s *Store) where() string {
	return strings.Join(s.cfg.Endpoints, ",") + " " + s.prefix
}

// Read implements [membership.Source]. The error wraps
// [membership.ErrBadContent] when a value under the prefix is refused (the
// first one is named), or [membership.ErrUnreachable].
func (s *Store) Read(ctx context.Context) (membership.Version, error) {
	ls, err := s.List(ctx)
	if err != nil {
		return membership.Version{}, err
	}
	if err := ls.problem(); err != nil {
		return membership.Version{}, err
	}
	v := ls.Version()
	v.Resync = true
	return v, nil
}

// problem returns the first refused value, with a count of the others,
// or nil.
func (s Listing) problem() error {
	switch len(s.Invalid) {
	case 0:
		return nil
	case 1:
		return s.Invalid[0]
	}
	values := "values"
	if len(s.Invalid) == 2 {
		values = "value"
	}
	return fmt.Errorf("%w (and %d more refused %s)", s.Invalid[0], len(s.Invalid)-1, values)
}

// state is the membership as a watch rebuilds it from events.
type state struct {
	prefix  string
	rev     int64              // revision of the last read or event applied
	members map[string]Member  // valid members by ID
	invalid map[string]refused // refused values by ID
	state   []byte
	resync  bool // read in full, and no version yielded since
}

func newState(prefix string, rev int64) *state {
	return &state{prefix: prefix, rev: rev, members: map[string]Member{}, invalid: map[string]refused{}}
}

// refused is a node key whose value does not parse.
type refused struct {
	err      error
	revision int64 // of the key's last write
}

// put applies a key's new value.
func (st *state) put(kv *mvccpb.KeyValue) {
	switch key := strings.TrimPrefix(string(kv.Key), st.prefix); {
	case key == stateKey:
		st.state = slices.Clone(kv.Value)
	case strings.HasPrefix(key, nodesKey):
		id := key[len(nodesKey):]
		m, err := ParseValue(id, kv.Value)
		if err != nil {
			delete(st.members, id)
			st.invalid[id] = refused{fmt.Errorf("key %q: %w", kv.Key, err), kv.ModRevision}
			return
		}
		m.Lease, m.Revision = kv.Lease, kv.ModRevision
		delete(st.invalid, id)
		st.members[id] = m
	}
}

// remove applies a key's deletion.
func (st *state) remove(kv *mvccpb.KeyValue) {
	switch key := strings.TrimPrefix(string(kv.Key), st.prefix); {
	case key == stateKey:
		st.state = nil
	case strings.HasPrefix(key, nodesKey):
		id := key[len(nodesKey):]
		delete(st.members, id)
		delete(st.invalid, id)
	}
}

// listing returns the state as a listing.
func (st *state) listing() Listing {
	ls := Listing{Revision: st.rev, State: slices.Clone(st.state), Members: make([]Member, 0, len(st.members))}
	for _, m := range st.members {
		ls.Members = append(ls.Members, m)
	}
	slices.SortFunc(ls.Members, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	ids := make([]string, 0, len(st.invalid))
	for id := range st.invalid {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		ls.Invalid = append(ls.Invalid, st.invalid[id].err)
	}
	return ls
}
