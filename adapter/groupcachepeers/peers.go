// Package groupcachepeers gives golang/groupcache peers placed by a kolco
// placement. groupcache's HTTPPool hard-wires its own consistent hash
// (crc32 with 50 points per peer, whose spread is uneven: groupcache #29)
// and a process registers one peer picker only; a [Picker] replaces
// HTTPPool whole - the peer picker and the HTTP handler that serves this
// process's groups to its peers, with HTTPPool's protocol:
//
//	peers, err := groupcachepeers.New("cache-a", shards.Config{Distribution: "ring"}, nodes...)
//	groupcache.RegisterPeerPicker(func() groupcache.PeerPicker { return peers })
//	http.Handle(groupcachepeers.DefaultBasePath, peers)
//
// Each node is a peer: its ID the name placed, its Addr the base URL its
// groups are served at ("http://10.0.0.1:8000", or "10.0.0.1:8000" for
// plain HTTP; the ID when there is no Addr). Every peer must be given the same nodes and configuration,
// so that all agree on each key's owner; [Follow] keeps a picker on a
// membership source that all peers read, applying each version as a
// change.
package groupcachepeers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/golang/groupcache"
	pb "github.com/golang/groupcache/groupcachepb"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/membership"
)

// DefaultBasePath is the path groups are served under, HTTPPool's.
const DefaultBasePath = "/_groupcache/"

// ErrNotMember is returned when the picker's own node is not among the
// nodes.
var ErrNotMember = errors.New("groupcachepeers: this peer is not among the nodes")

// Options tune a Picker. The zero value means HTTPPool's defaults.
type Options struct {
	// BasePath is the path groups are served under, the same on every
	// peer. Empty means DefaultBasePath.
	BasePath string
	// Transport returns the round tripper of a request to a peer; nil
	// means http.DefaultTransport.
	Transport func(context.Context) http.RoundTripper
}

// Picker is a groupcache.PeerPicker over a kolco placement and the
// http.Handler serving this peer's groups. It is safe for concurrent use;
// PickPeer takes no lock and allocates nothing.
type Picker struct {
	self   string
	opts   Options
	cur    *shards.Current[groupcache.ProtoGetter] // nil getter: this peer
	live   *shards.Live[groupcache.ProtoGetter]    // or
	follow *shards.Follower[groupcache.ProtoGetter]
}

var _ groupcache.PeerPicker = (*Picker)(nil)

// New returns the picker of the peer whose node ID is self, over nodes
// placed as cfg says, with HTTPPool's defaults. The error wraps
// ErrNotMember, shards.ErrBadConfig, or the placement's errors.
func New(self string, cfg shards.Config, nodes ...kolco.Node) (*Picker, error) {
	return NewWithOptions(self, cfg, Options{}, nodes...)
}

// NewWithOptions is New with options.
func NewWithOptions(self string, cfg shards.Config, opts Options, nodes ...kolco.Node) (*Picker, error) {
	p := &Picker{self: self, opts: opts}
	if err := p.checkSelf(nodes); err != nil {
		return nil, err
	}
	l, err := shards.New(cfg, nodes, p.getter)
	if err != nil {
		return nil, err
	}
	p.cur, p.live = &l.Current, l
	return p, nil
}

// Follow returns the picker of peer self following src (see
// shards.Follow). A version without self is not applied (see
// Picker.Err). The error is as for shards.Follow, or wraps ErrNotMember.
func Follow(ctx context.Context, src membership.Source, self string, cfg shards.Config, opts Options) (*Picker, error) {
	p := &Picker{self: self, opts: opts}
	f, err := shards.Follow(ctx, src, cfg, p.getter, nil)
	if err != nil {
		return nil, err
	}
	if err := p.checkSelf(f.Table().Nodes()); err != nil {
		f.Close()
		return nil, err
	}
	p.cur, p.follow = &f.Current, f
	return p, nil
}

func (p *Picker) checkSelf(nodes []kolco.Node) error {
	for _, n := range nodes {
		if n.ID == p.self {
			return nil
		}
	}
	return fmt.Errorf("%w: %q", ErrNotMember, p.self)
}

func (p *Picker) basePath() string {
	if p.opts.BasePath == "" {
		return DefaultBasePath
	}
	return p.opts.BasePath
}

// getter returns the getter of a peer: nil for this one, whose keys are
// loaded here; an error for a peer whose address is not a base URL.
func (p *Picker) getter(n kolco.Node) (groupcache.ProtoGetter, error) {
	if n.ID == p.self {
		return nil, nil
	}
	base := n.Addr
	if base == "" {
		base = n.ID // a peer named by its address
	}
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: peer %q: %q is not a base URL", kolco.ErrBadConfig, n.ID, base)
	}
	return &httpGetter{base: strings.TrimSuffix(base, "/") + p.basePath(), transport: p.opts.Transport}, nil
}

// PickPeer returns the peer that owns key, and false when this peer owns
// it or there are no peers.
func (p *Picker) PickPeer(key string) (groupcache.ProtoGetter, bool) {
	g, err := p.cur.Table().Lookup(key)
	if err != nil || g == nil {
		return nil, false
	}
	return g, true
}

// Table returns the current placement with each peer's getter (nil for
// this peer).
func (p *Picker) Table() *shards.Table[groupcache.ProtoGetter] { return p.cur.Table() }

// Update makes nodes the peers, as the change from the current ones. The
// error is as for New, or ErrNotMember; a picker that follows a source
// is changed by the source alone and refuses with errFollowing.
func (p *Picker) Update(nodes ...kolco.Node) error {
	if p.live == nil {
		return errFollowing
	}
	if err := p.checkSelf(nodes); err != nil {
		return err
	}
	return p.live.Update(nodes)
}

var errFollowing = errors.New("groupcachepeers: the peers follow a membership source")

// Err returns why the last version of the source was not applied.
func (p *Picker) Err() error {
	if p.follow == nil {
		return nil
	}
	return p.follow.Err()
}

// Close stops following the source, if any; the peers stay as they are.
func (p *Picker) Close() error {
	if p.follow == nil {
		return nil
	}
	return p.follow.Close()
}

// httpGetter fetches a key of a group from a peer, with HTTPPool's
// protocol: GET base/group/key, a GetResponse in protobuf.
type httpGetter struct {
	base      string // the peer's base URL with the base path
	transport func(context.Context) http.RoundTripper
}

var _ groupcache.ProtoGetter = (*httpGetter)(nil)

func (h *httpGetter) Get(ctx context.Context, in *pb.GetRequest, out *pb.GetResponse) error {
	u := h.base + url.QueryEscape(in.GetGroup()) + "/" + url.QueryEscape(in.GetKey())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	tr := http.DefaultTransport
	if h.transport != nil {
		tr = h.transport(ctx)
	}
	res, err := tr.RoundTrip(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	return readResponse(res, out)
}
