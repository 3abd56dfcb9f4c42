// Package gomemcache places the keys of bradfitz/gomemcache's client with
// kolco: a [Selector] is a memcache.ServerSelector over any kolco
// placement, so that
//
//	sel, err := gomemcache.New(shards.Config{Distribution: "ring", HashTag: "{}"}, nodes...)
//	mc := memcache.NewFromSelector(sel)
//
// spreads keys by consistent hashing instead of the client's own
// crc32(key) % N, which moves almost every key when a server is added.
//
// Configured as a kolco proxy pool is (package shards: distribution, key
// hash, hash tag; nodes named as the proxy names its servers), a Selector
// sends every key to the server the proxy and kolco locate name, so that
// an app and the proxy, or two apps, share one set of memcached servers;
// with Distribution "ketama" or "modula" it places keys as twemproxy
// (nutcracker) does, for an app beside a nutcracker fleet. gomemcache
// applies no hash tag; the Selector applies the configured one itself.
//
// Addresses are resolved when a node is added or readdressed, never per
// request: [Follow] keeps the selector on a membership source (a node file,
// nutcracker.yml, DNS, etcd), applying each version as a change.
package gomemcache

import (
	"cmp"
	"context"
	"errors"
	"net"
	"strings"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/membership"
)

// DefaultPort is the port of a node whose address has none, as in
// twemproxy, where a server on 11211 is named by its host alone.
const DefaultPort = "11211"

// Selector is a memcache.ServerSelector placing keys with kolco. It is
// safe for concurrent use; PickServer takes no lock and allocates nothing.
type Selector struct {
	static *shards.Table[net.Addr]   // a fixed placement, or nil
	cur    *shards.Current[net.Addr] // else the live or following one's
	live   *shards.Live[net.Addr]
	follow *shards.Follower[net.Addr]
}

var _ memcache.ServerSelector = (*Selector)(nil)

// New returns a selector placing keys on nodes as cfg says. Each node is
// dialed at its Addr, else at its ID (with [DefaultPort] when it has no
// port; a path with a slash is a unix socket). The error wraps
// shards.ErrBadConfig, the placement's errors (kolco.ErrNoNodes,
// kolco.ErrDuplicateNode, ...), or the error resolving an address.
func New(cfg shards.Config, nodes ...kolco.Node) (*Selector, error) {
	l, err := shards.New(cfg, nodes, Resolve)
	if err != nil {
		return nil, err
	}
	return &Selector{cur: &l.Current, live: l}, nil
}

// Over returns a selector over any kolco placement p, fixed (a compat
// placement, one built by a package of its own), with hash tag tag ("" for
// none). Its nodes are dialed as New's are. p must not change afterwards.
func Over(p kolco.Placement, tag string) (*Selector, error) {
	t, err := shards.Static(p, tag, Resolve)
	if err != nil {
		return nil, err
	}
	return &Selector{static: t}, nil
}

// Follow returns a selector following src (see shards.Follow): built from
// its first version, changed by each later one until Close. The error is as
// for shards.Follow.
func Follow(ctx context.Context, src membership.Source, cfg shards.Config) (*Selector, error) {
	f, err := shards.Follow(ctx, src, cfg, Resolve, nil)
	if err != nil {
		return nil, err
	}
	return &Selector{cur: &f.Current, follow: f}, nil
}

func (s *Selector) table() *shards.Table[net.Addr] {
	if s.static != nil {
		return s.static
	}
	return s.cur.Table()
}

// PickServer returns the address of the server key is placed on. The
// error is memcache.ErrNoServers when there are no nodes.
func (s *Selector) PickServer(key string) (net.Addr, error) {
	a, err := s.table().Lookup(key)
	if err != nil {
		return nil, memcache.ErrNoServers
	}
	return a, nil
}

// Each calls f with the address of each server, in node ID order, until f
// returns an error, which it returns.
func (s *Selector) Each(f func(net.Addr) error) error {
	t := s.table()
	for i := range t.Len() {
		if err := f(t.Value(i)); err != nil {
			return err
		}
	}
	return nil
}

// Table returns the current placement with the address of each node.
func (s *Selector) Table() *shards.Table[net.Addr] { return s.table() }

// Update makes nodes the servers, as the change from the current ones
// (shards.Live.Update); addresses are resolved for the nodes added or
// readdressed. The error is as for New, or ErrFixed for a selector made by
// Over or following a source.
func (s *Selector) Update(nodes ...kolco.Node) error {
	if s.live == nil {
		return ErrFixed
	}
	return s.live.Update(nodes)
}

// ErrFixed is returned by [Selector.Update] on a selector whose servers
// are not its caller's to change.
var ErrFixed = errors.New("gomemcache: the selector's servers are fixed or follow a source")

// Err returns why the last version of the source was not applied, nil when
// it was or the selector follows no source.
func (s *Selector) Err() error {
	if s.follow == nil {
		return nil
	}
	return s.follow.Err()
}

// Close stops following the source, if any; the selector keeps its last
// servers.
func (s *Selector) Close() error {
	if s.follow == nil {
		return nil
	}
	return s.follow.Close()
}

// Resolve returns the address a node is dialed at: its Addr, else its ID,
// with [DefaultPort] added to a host without a port, resolved now; a path
// holding a slash is a unix socket. The address keeps its network and text,
// so that the client's connection pool, which names connections by them,
// does not format an address per request.
func Resolve(n kolco.Node) (net.Addr, error) {
	addr := cmp.Or(n.Addr, n.ID)
	if strings.Contains(addr, "/") {
		a, err := net.ResolveUnixAddr("unix", addr)
		if err != nil {
			return nil, err
		}
		return staticAddr{"unix", a.String()}, nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, DefaultPort)
	}
	a, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil, err
	}
	return staticAddr{"tcp", a.String()}, nil
}

// staticAddr is a resolved address whose text is made once.
type staticAddr struct{ network, text string }

func (a staticAddr) Network() string { return a.network }
func (a staticAddr) String() string  { return a.text }
