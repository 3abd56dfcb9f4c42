package twemproxy

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/hashkit"
	"github.com/kolco-dev/kolco/internal/continuum"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// Distribution names, as in nutcracker.yml's "distribution:".
const (
	Ketama = "ketama"
	Modula = "modula"
	Random = "random"
)

// DefaultHash is the key hash of a pool without "hash:".
const DefaultHash = "fnv1a_64"

// hashNames are the values nutcracker 0.5.0 accepts for "hash:".
var hashNames = []string{"one_at_a_time", "md5", "crc16", "crc32", "crc32a", "fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32", "hsieh", "murmur", "jenkins"}

// Config is the placement part of a nutcracker.yml pool. The zero value is
// nutcracker's default: fnv1a_64, no hash tag, ketama.
type Config struct {
	// Hash is the key hash: one_at_a_time, md5, crc16, crc32, crc32a,
	// fnv1_64, fnv1a_64, fnv1_32, fnv1a_32, hsieh, murmur or jenkins.
	// Empty means fnv1a_64.
	Hash string
	// HashTag is empty or exactly two bytes, such as "{}".
	HashTag string
	// Distribution is ketama (the default when empty), modula or random;
	// random is rejected because it is not a function of the key.
	Distribution string
}

// Pool places keys on a fixed list of servers. It is immutable and safe for
// concurrent use; lookups do not allocate. It satisfies [kolco.Placement]
// with Node.ID = Name when set, else the address, Node.Addr = the address
// and Node.Weight = the weight.
type Pool struct {
	servers []Server
	list    nodeset.List // the servers as nodes, in the caller's order
	hash    hashkit.Func
	tag     [2]byte
	hasTag  bool
	modula  bool

	// Ketama: the continuum; owners index servers.
	ring continuum.Continuum[uint32]

	// Modula: the servers in nutcracker's order with their cumulative
	// weights; a hash h picks the first entry whose end > h % total.
	ends   []uint64
	byName []int32
	total  uint64
}

// New returns the placement nutcracker uses for a pool with the given
// configuration and live servers. The error wraps [kolco.ErrNoNodes] for no
// servers, [kolco.ErrBadWeight] for a negative weight or a total weight above
// 2^32-1, [kolco.ErrDuplicateNode] for two servers with the same ring name or
// the same Node.ID, [kolco.ErrBadNodeID] for an empty host, and
// [kolco.ErrBadConfig] for an unknown hash (also [hashkit.ErrUnknown]) or
// distribution, a hash tag that is not two bytes, or random.
func New(cfg Config, servers []Server) (*Pool, error) {
	p := &Pool{servers: slices.Clone(servers)}
	if err := p.configure(cfg); err != nil {
		return nil, err
	}
	if len(servers) == 0 {
		return nil, kolco.ErrNoNodes
	}
	if err := p.setNodes(); err != nil {
		return nil, err
	}
	order := nameOrder(p.servers)
	if p.modula {
		p.buildModula(order)
		return p, nil
	}
	return p, p.buildKetama(order)
}

func (p *Pool) configure(cfg Config) error {
	hash := cmp.Or(cfg.Hash, DefaultHash)
	if !slices.Contains(hashNames, hash) {
		return fmt.Errorf("%w: hash %q: %w (nutcracker knows %s)", kolco.ErrBadConfig, cfg.Hash, hashkit.ErrUnknown, strings.Join(hashNames, ", "))
	}
	p.hash, _ = hashkit.Parse(hash)
	switch len(cfg.HashTag) {
	case 0:
	case 2:
		p.tag, p.hasTag = [2]byte{cfg.HashTag[0], cfg.HashTag[1]}, true
	default:
		return fmt.Errorf("%w: hash_tag %q is not two characters", kolco.ErrBadConfig, cfg.HashTag)
	}
	switch cfg.Distribution {
	case "", Ketama:
	case Modula:
		p.modula = true
	case Random:
		return fmt.Errorf("%w: distribution random does not place keys by hash", kolco.ErrBadConfig)
	default:
		return fmt.Errorf("%w: unknown distribution %q (want ketama, modula or random)", kolco.ErrBadConfig, cfg.Distribution)
	}
	return nil
}

func (p *Pool) setNodes() error {
	nodes := make([]kolco.Node, len(p.servers))
	names := make(map[string]struct{}, len(p.servers))
	ids := make(map[string]struct{}, len(p.servers))
	var total uint64
	for i, s := range p.servers {
		if s.Host == "" {
			return fmt.Errorf("server %d: %w (empty host)", i, kolco.ErrBadNodeID)
		}
		if s.Weight < 0 {
			return fmt.Errorf("server %q: %w (got %d)", s.Addr(), kolco.ErrBadWeight, s.Weight)
		}
		if s.Weight == 0 {
			p.servers[i].Weight = 1
		}
		total += uint64(p.servers[i].Weight)
		n := kolco.Node{ID: cmp.Or(s.Name, s.Addr()), Weight: float64(p.servers[i].Weight), Addr: s.Addr()}
		if _, dup := names[s.RingName()]; dup {
			return fmt.Errorf("%w: two servers named %q", kolco.ErrDuplicateNode, s.RingName())
		}
		if _, dup := ids[n.ID]; dup {
			return fmt.Errorf("%w: %q", kolco.ErrDuplicateNode, n.ID)
		}
		names[s.RingName()], ids[n.ID] = struct{}{}, struct{}{}
		nodes[i] = n
	}
	if total > math.MaxUint32 {
		return fmt.Errorf("%w: total weight %d exceeds 2^32-1", kolco.ErrBadWeight, total)
	}
	var err error
	p.list, err = nodeset.NewList(nodes, nil)
	return err
}

// nameOrder returns the indexes of servers in nutcracker's order: sorted by
// ring name, shorter names first, then bytewise (its string_compare).
func nameOrder(servers []Server) []int32 {
	names := make([]string, len(servers))
	order := make([]int32, len(servers))
	for i := range order {
		names[i], order[i] = servers[i].RingName(), int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		x, y := names[a], names[b]
		return cmp.Or(cmp.Compare(len(x), len(y)), strings.Compare(x, y))
	})
	return order
}

func (p *Pool) buildModula(order []int32) {
	p.byName = order
	p.ends = make([]uint64, len(order))
	for j, i := range order {
		p.total += uint64(p.servers[i].Weight)
		p.ends[j] = p.total
	}
}

// Servers returns a copy of the servers in the order given to [New], with
// zero weights read as 1.
func (p *Pool) Servers() []Server { return slices.Clone(p.servers) }

// Index returns the index, into the servers given to [New], of the server
// nutcracker sends key to (-1 for the zero Pool).
func (p *Pool) Index(key []byte) int {
	if len(p.servers) <= 1 {
		return len(p.servers) - 1 // 0, or -1 for the zero Pool
	}
	h := p.hashOf(key)
	if p.modula {
		m := uint64(h) % p.total
		lo, hi := 0, len(p.ends)
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if p.ends[mid] <= m {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		return int(p.byName[lo])
	}
	return p.ring.Locate(h)
}

// Tagged returns the part of key nutcracker hashes under the hash tag
// tag (such as {'{', '}'}): the text between the first tag[0] and the first
// tag[1] after it, when that text is not empty; else the whole key. The
// result shares key's memory.
func Tagged(key []byte, tag [2]byte) []byte {
	start := bytes.IndexByte(key, tag[0])
	if start < 0 {
		return key
	}
	end := bytes.IndexByte(key[start+1:], tag[1])
	if end <= 0 {
		return key
	}
	return key[start+1 : start+1+end]
}
