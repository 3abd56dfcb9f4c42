package haproxy

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
	"github.com/kolco-dev/kolco/internal/continuum"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// nodesPerWeight is BE_WEIGHT_SCALE, and idStride SRV_EWGHT_RANGE
// (256 * 16): the node keys of one server are full_hash(puid*idStride + j).
const (
	nodesPerWeight = 16
	idStride       = MaxWeight * nodesPerWeight
)

// Placement is a HAProxy backend's hash placement. It is immutable and safe
// for concurrent use; lookups do not allocate.
type Placement struct {
	list nodeset.List
	hash HashType

	// consistent: the node keys; owners index servers.
	ring continuum.Continuum[uint32]
	// map-based: one server index per slot.
	table []int32
}

var _ kolco.Placement = (*Placement)(nil)

// New returns the placement HAProxy uses for these servers, in declaration
// order, under hash-type h. The error wraps [kolco.ErrNoNodes] when no
// active server has a weight above 0, [kolco.ErrDuplicateNode] for a name or
// id used twice, [kolco.ErrBadNodeID] for an empty name, [kolco.ErrBadWeight]
// for a weight outside 0..256 and [kolco.ErrBadConfig] for a negative id.
func New(servers []Server, h HashType) (*Placement, error) {
	nodes := make([]kolco.Node, len(servers))
	placed := make([]bool, len(servers))
	for i, s := range servers {
		if s.Weight < 0 || s.Weight > MaxWeight {
			return nil, fmt.Errorf("haproxy: server %q: %w (got %d)", s.Name, kolco.ErrBadWeight, s.Weight)
		}
		if s.ID < 0 {
			return nil, fmt.Errorf("%w: haproxy: server %q: negative id %d", kolco.ErrBadConfig, s.Name, s.ID)
		}
		nodes[i] = kolco.Node{ID: s.Name, Addr: s.Addr, Weight: float64(s.Weight)}
		if s.Weight == 0 {
			nodes[i].Weight = 1 // not placed; kolco reads 0 as 1 anyway
		}
		placed[i] = !s.Backup && s.Weight > 0
	}
	list, err := nodeset.NewList(nodes, placed)
	if err != nil {
		return nil, fmt.Errorf("haproxy: %w", err)
	}
	p := &Placement{list: list, hash: h}
	if h.Type == Consistent {
		puids, err := assignIDs(servers)
		if err != nil {
			return nil, err
		}
		p.buildTree(servers, placed, puids)
	} else {
		p.buildMap(servers, placed)
	}
	return p, nil
}

// assignIDs returns each server's puid as HAProxy's configuration check
// assigns them: explicit ids first, then for the others the smallest unused
// id >= a counter that starts at 1 and advances once per server line.
func assignIDs(servers []Server) ([]uint32, error) {
	used := make(map[int]bool, len(servers))
	for _, s := range servers {
		if s.ID == 0 {
			continue
		}
		if used[s.ID] {
			return nil, fmt.Errorf("%w: haproxy: id %d used twice", kolco.ErrDuplicateNode, s.ID)
		}
		used[s.ID] = true
	}
	puids := make([]uint32, len(servers))
	next := 1
	for i, s := range servers {
		if s.ID != 0 {
			puids[i] = uint32(s.ID)
		} else {
			for used[next] {
				next++
			}
			used[next] = true
			puids[i] = uint32(next)
		}
		next++
	}
	return puids, nil
}

// buildTree places weight*16 nodes per active server. full_hash is a
// bijection, so keys repeat only when puid*4096+j wraps around 2^32; equal
// keys keep declaration order, the order they are added in.
func (p *Placement) buildTree(servers []Server, placed []bool, puids []uint32) {
	var b continuum.Builder[uint32]
	for i, s := range servers {
		if !placed[i] {
			continue
		}
		for j := range uint32(s.Weight * nodesPerWeight) {
			b.Add(FullHash(puids[i]*idStride+j), i)
		}
	}
	p.ring = b.Build(continuum.KeepAll)
}

// buildMap fills the map-based table as lb_map.c's recalc_server_map does.
func (p *Placement) buildMap(servers []Server, placed []bool) {
	gcd := 0
	for _, s := range servers { // over all servers, backups included
		if s.Weight == 0 {
			continue
		}
		if gcd == 0 {
			gcd = s.Weight
			continue
		}
		for w := s.Weight; w != 0; {
			gcd, w = w, gcd%w
		}
	}
	eweight := make([]int, len(servers))
	tot := 0
	for i, s := range servers {
		if placed[i] {
			eweight[i] = (s.Weight + gcd - 1) / gcd
			tot += eweight[i]
		}
	}
	score := make([]int, len(servers))
	p.table = make([]int32, tot)
	for o := range tot {
		best, max := -1, 0
		for i := range servers {
			if eweight[i] == 0 {
				continue
			}
			if tot == 1 {
				best = i
				break
			}
			score[i] += eweight[i]
			if v := (score[i] + tot) / tot; best < 0 || v > max {
				best, max = i, v
			}
		}
		p.table[o] = int32(best)
		score[best] -= tot
	}
}

// Hash returns the placement's hash-type setting.
func (p *Placement) Hash() HashType { return p.hash }

// Index returns the position, in declaration order, of the server HAProxy
// sends key to.
func (p *Placement) Index(key []byte) int { return p.IndexHash(p.hash.Hash(key)) }

// IndexHash is [Placement.Index] for a key hash already computed, such as
// HAProxy's hash of a source address.
func (p *Placement) IndexHash(h uint32) int {
	if p.table != nil {
		return int(p.table[h%uint32(len(p.table))])
	}
	return p.ring.Owner(p.ring.Nearest(h))
}

// Locate returns the server HAProxy sends key to. The error is always nil.
func (p *Placement) Locate(key string) (*kolco.Node, error) {
	return p.list.At(p.Index(bytestr.Of(key))), nil
}

// LocateN appends up to n distinct servers: the chosen one, then those of
// the following nodes (consistent) or map slots (map-based). The error wraps
// [kolco.ErrBadCount] when n < 1.
func (p *Placement) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	h := p.hash.Hash(bytestr.Of(key))
	if p.table != nil {
		start := int(h % uint32(len(p.table)))
		return p.list.AppendN(dst, n, len(p.table), func(step int) int { return int(p.table[(start+step)%len(p.table)]) })
	}
	start := p.ring.Nearest(h)
	return p.list.AppendN(dst, n, p.ring.Len(), func(step int) int { return p.ring.Walk(start, step) })
}

// Nodes returns the servers that receive keys, sorted by name.
func (p *Placement) Nodes() []kolco.Node { return p.list.Nodes() }
