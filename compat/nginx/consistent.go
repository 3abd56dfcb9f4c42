package nginx

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// Consistent is the placement of `hash $key consistent;`. It is immutable
// and safe for concurrent use; lookups do not allocate.
type Consistent struct {
	list   nodeset.List
	points []uint32 // sorted, distinct
	owner  []int32  // owner[i] is the server index of points[i]
	down   []bool   // down[i]: server i is marked down
}

var _ kolco.Placement = (*Consistent)(nil)

// NewConsistent builds the ring nginx builds for these server lines, in
// their configuration order. Servers marked down keep their points; a key
// whose point belongs to one goes on to the next point of a server that is
// up, as nginx does. The error wraps [kolco.ErrNoNodes] (no server up),
// [kolco.ErrDuplicateNode] (the same address twice), [kolco.ErrBadNodeID]
// (an empty address) or [kolco.ErrBadWeight].
func NewConsistent(servers []Server) (*Consistent, error) {
	ns, up, err := nodes(servers)
	if err != nil {
		return nil, err
	}
	list, err := nodeset.NewList(ns, up)
	if err != nil {
		return nil, fmt.Errorf("nginx: %w", err)
	}
	type point struct {
		h     uint32
		owner int32
	}
	var pts []point
	for i, s := range servers {
		host, port := splitHostPort(s.Addr)
		base := make([]byte, 0, len(host)+1+len(port)+4)
		base = append(append(append(base, host...), 0), port...)
		var prev [4]byte
		for range 160 * s.weight() {
			h := crc32.ChecksumIEEE(append(base, prev[:]...))
			pts = append(pts, point{h, int32(i)})
			binary.LittleEndian.PutUint32(prev[:], h)
		}
	}
	slices.SortStableFunc(pts, func(a, b point) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		}
		return 0
	})
	c := &Consistent{list: list, down: make([]bool, len(servers))}
	for i, s := range servers {
		c.down[i] = s.Down
	}
	for i, p := range pts {
		if i > 0 && p.h == pts[i-1].h {
			continue
		}
		c.points = append(c.points, p.h)
		c.owner = append(c.owner, p.owner)
	}
	return c, nil
}

// Index returns the position, in the configuration, of the server nginx
// sends key to.
func (c *Consistent) Index(key []byte) int {
	start := c.search(crc32.ChecksumIEEE(key))
	for step := range len(c.points) {
		if o := c.owner[(start+step)%len(c.points)]; !c.down[o] {
			return int(o)
		}
	}
	return int(c.owner[start%len(c.points)]) // unreachable: NewConsistent requires a server up
}

// search returns the index of the first point >= h, len(points) if none.
func (c *Consistent) search(h uint32) int {
	lo, hi := 0, len(c.points)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.points[m] < h {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Points returns the number of distinct ring points (160 per unit of weight
// less the dropped duplicates).
func (c *Consistent) Points() int { return len(c.points) }

// Locate returns the server nginx sends key to. The error is always nil.
func (c *Consistent) Locate(key string) (kolco.Node, error) {
	return c.list.At(c.Index(bytestr.Of(key))), nil
}

// LocateN appends up to n distinct servers in nginx's retry order: the
// servers of the following ring points. The error wraps [kolco.ErrBadCount]
// when n < 1.
func (c *Consistent) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	start := c.search(crc32.ChecksumIEEE(bytestr.Of(key)))
	np := len(c.points)
	return c.list.AppendN(dst, n, np, func(step int) int { return int(c.owner[(start+step)%np]) })
}

// Nodes returns the servers that are up, sorted by address.
func (c *Consistent) Nodes() []kolco.Node { return c.list.Nodes() }
