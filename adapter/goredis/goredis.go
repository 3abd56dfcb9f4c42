// Package goredis places the keys of a go-redis v9 Ring with any kolco
// algorithm, through RingOptions.NewConsistentHash:
//
//	sh, err := goredis.New(shards.Config{Distribution: "jump", HashTag: "{}"}, nodes...)
//	rdb := redis.NewRing(sh.Options(&redis.RingOptions{}))
//
// Each node is a shard: its ID is the shard's name, the string placed, and
// its Addr the address dialed (see [Shards.Options]).
//
// # Shards down
//
// go-redis calls NewConsistentHash again whenever its heartbeat marks a
// shard down or up, with the live shards only, and expects a placement over
// them: a history-dependent algorithm (jump, anchor, slots) built anew over
// fewer shards places almost every key differently, as zalando/skipper
// #1803 found with jump. Here the placement is never rebuilt for a
// heartbeat: it stays over every shard of the membership, and the
// consistent hash handed to go-redis sends a key whose owner is down to the
// next live shard of the key's preference list (kolco.Placement.LocateN).
// So a shard going down moves only its own keys, coming back moves them
// home, and every algorithm works, history-dependent ones included; an app
// started while a shard is down places keys as one that saw the shard go.
//
// The membership - which shards exist - changes only through [Shards]
// itself ([Shards.Update], or [Follow] on a membership source), as a change
// applied to the placement; Shards then gives go-redis the new addresses
// (Ring.SetAddrs) of the rings it made ([Shards.NewRing]). A shard that
// go-redis knows but the membership does not is never given a key.
//
// # Hash tags
//
// go-redis hashes only the text between "{" and the first "}" after it,
// when not empty, before it calls the consistent hash, and offers no way
// to turn that off: the rule of kolco proxy's hash_tag "{}" and of
// shards.Tagged, so keys with and without tags land where kolco locate
// names the owner of that text, and where a kolco proxy Redis pool
// (redis: true, hash_tag: "{}") with the same distribution, hash and
// server names reads them: nodes from membership.ParseNutcracker on the
// pool's configuration are those shards. A pool without hash_tag places a
// tagged key by the whole key, most often on another shard than the tag's:
// so the shards take only HashTag "{}", which names the pool's setting,
// and [New] and [Follow] refuse any other, the empty one included.
package goredis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/membership"
)

// DefaultPort is the port of a node whose address has none.
const DefaultPort = "6379"

// ErrFixed is returned by [Shards.Update] on shards that follow a source.
var ErrFixed = errors.New("goredis: the shards follow a membership source")

// Shards is the membership of a go-redis Ring placed by a kolco algorithm.
// It is safe for concurrent use.
type Shards struct {
	cur    *shards.Current[string] // values: the address dialed
	live   *shards.Live[string]    // or
	follow *shards.Follower[string]

	mu    sync.Mutex // guards rings
	rings []*redis.Ring
}

// New returns shards placing keys on nodes as cfg says. cfg.HashTag must be
// "{}", the tag go-redis applies itself (see Hash tags); the error for any
// other wraps shards.ErrBadConfig. Each node is dialed at its
// Addr, else at its ID (with [DefaultPort] when it has no port). The error
// wraps shards.ErrBadConfig or the placement's errors (kolco.ErrNoNodes,
// kolco.ErrDuplicateNode, ...).
func New(cfg shards.Config, nodes ...kolco.Node) (*Shards, error) {
	if err := checkTag(cfg); err != nil {
		return nil, err
	}
	l, err := shards.New(cfg, nodes, address)
	if err != nil {
		return nil, err
	}
	return &Shards{cur: &l.Current, live: l}, nil
}

// Follow returns shards following src (see shards.Follow): built from its
// first version and changed by each later one until Close, each change
// passed on to the rings made by [Shards.NewRing]. cfg.HashTag must be
// "{}", as for [New]. The error is as for shards.Follow.
func Follow(ctx context.Context, src membership.Source, cfg shards.Config) (*Shards, error) {
	if err := checkTag(cfg); err != nil {
		return nil, err
	}
	s := &Shards{}
	f, err := shards.Follow(ctx, src, cfg, address, s.setAddrs)
	if err != nil {
		return nil, err
	}
	s.cur, s.follow = &f.Current, f
	return s, nil
}

// checkTag refuses every hash tag but go-redis's own. An empty one is
// not read as "{}": written out, the tag reminds whoever configures a
// kolco proxy pool beside the ring to give it the same.
func checkTag(cfg shards.Config) error {
	if cfg.HashTag != "{}" {
		return fmt.Errorf("%w: hash tag %q: go-redis places a key holding {text} by the text alone, whatever the consistent hash; "+
			`set HashTag: "{}", and hash_tag: "{}" on a kolco proxy Redis pool over the same shards`, shards.ErrBadConfig, cfg.HashTag)
	}
	return nil
}

// address returns the address a node is dialed at.
func address(n kolco.Node) (string, error) {
	addr := cmp.Or(n.Addr, n.ID)
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, DefaultPort)
	}
	return addr, nil
}

// Addrs returns the shards' addresses by name, as RingOptions.Addrs takes
// them.
func (s *Shards) Addrs() map[string]string { return addrsOf(s.cur.Table()) }

func addrsOf(t *shards.Table[string]) map[string]string {
	addrs := make(map[string]string, t.Len())
	for i := range t.Len() {
		addrs[t.Node(i).ID] = t.Value(i)
	}
	return addrs
}

// Options sets opt's Addrs to the shards' addresses and its
// NewConsistentHash to [Shards.NewConsistentHash], and returns opt.
func (s *Shards) Options(opt *redis.RingOptions) *redis.RingOptions {
	opt.Addrs = s.Addrs()
	opt.NewConsistentHash = s.NewConsistentHash
	return opt
}

// NewRing returns redis.NewRing(s.Options(opt)), a ring that Shards keeps
// up to date: each later change of the membership is passed on to it with
// Ring.SetAddrs.
func (s *Shards) NewRing(opt *redis.RingOptions) *redis.Ring {
	r := redis.NewRing(s.Options(opt))
	s.Attach(r)
	return r
}

// Attach makes Shards pass each later change of the membership on to r, a
// ring made with [Shards.Options], with Ring.SetAddrs.
func (s *Shards) Attach(r *redis.Ring) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rings = append(s.rings, r)
}

// Update makes nodes the shards, as the change from the current ones
// (shards.Live.Update), and passes their addresses on to the rings made by
// NewRing. The error is as for New, or ErrFixed when the shards follow a
// source.
func (s *Shards) Update(nodes ...kolco.Node) error {
	if s.live == nil {
		return ErrFixed
	}
	if err := s.live.Update(nodes); err != nil {
		return err
	}
	s.setAddrs(s.live.Table())
	return nil
}

// setAddrs gives the rings the addresses of t, the table just published.
func (s *Shards) setAddrs(t *shards.Table[string]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rings {
		r.SetAddrs(addrsOf(t))
	}
}

// Table returns the current placement with each shard's address.
func (s *Shards) Table() *shards.Table[string] { return s.cur.Table() }

// Err returns why the last version of the source was not applied, nil when
// it was or the shards follow no source.
func (s *Shards) Err() error {
	if s.follow == nil {
		return nil
	}
	return s.follow.Err()
}

// Close stops following the source, if any; the shards keep their last
// membership. It does not close the rings.
func (s *Shards) Close() error {
	if s.follow == nil {
		return nil
	}
	return s.follow.Close()
}
