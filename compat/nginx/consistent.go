package nginx

import (
	"encoding/binary"
	"hash/crc32"
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
	"github.com/kolco-dev/kolco/internal/continuum"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// Consistent is the placement of `hash $key consistent;`. It is immutable
// and safe for concurrent use; lookups do not allocate.
type Consistent struct {
	list nodeset.List
	ring continuum.Continuum[uint32] // distinct points; owners index servers
	down []bool                      // down[i]: server i is marked down
}

var _ kolco.Placement = (*Consistent)(nil)

// NewConsistent builds the ring nginx builds for these server lines, in
// their configuration order. Servers marked down keep their points; a key
// whose point belongs to one goes on to the next point of a server that is
// up, as nginx does. The error wraps [kolco.ErrNoNodes] (no server up),
// [kolco.ErrDuplicateNode] (the same address twice), [kolco.ErrBadNodeID]
// (an empty address) or [kolco.ErrBadWeight].
func NewConsistent(servers []Server) (*Consistent, error) {
	list, err := nodeList(servers)
	if err != nil {
		return nil, err
	}
	var b continuum.Builder[uint32]
	for i, s := range servers {
		host, port := splitHostPort(s.Addr)
		base := make([]byte, 0, len(host)+1+len(port)+4)
		base = append(append(append(base, host...), 0), port...)
		var prev [4]byte
		for range 160 * s.weight() {
			h := crc32.ChecksumIEEE(append(base, prev[:]...))
			b.Add(h, i)
			binary.LittleEndian.PutUint32(prev[:], h)
		}
	}
	// nginx sorts its points with ngx_sort, stable, then drops every point
	// equal to the one before: of equal points the first server's stays.
	c := &Consistent{list: list, ring: b.Build(continuum.KeepFirst), down: make([]bool, len(servers))}
	for i, s := range servers {
		c.down[i] = s.Down
	}
	return c, nil
}

// Index returns the position, in the configuration, of the server nginx
// sends key to: the owner of the first point >= crc32(key), nginx's
// "point[i % N]", or of the next point whose server is up. When every point
// belongs to a server that is down - servers up whose points all equal
// those of servers before them, which nginx drops - nginx gives up and
// picks by round robin, which depends on earlier requests; Index then
// returns the first server that is up, as LocateN lists it first.
func (c *Consistent) Index(key []byte) int {
	start := c.ring.Search(crc32.ChecksumIEEE(key))
	if o := c.ring.Owner(start); !c.down[o] { // the usual case, without Walk's division
		return o
	}
	for step := 1; step < c.ring.Len(); step++ {
		if o := c.ring.Walk(start, step); !c.down[o] {
			return o
		}
	}
	return slices.Index(c.down, false)
}

// Points returns the number of distinct ring points (160 per unit of weight
// less the dropped duplicates).
func (c *Consistent) Points() int { return c.ring.Len() }

// Locate returns the server nginx sends key to. The error is always nil.
func (c *Consistent) Locate(key string) (*kolco.Node, error) {
	return c.list.At(c.Index(bytestr.Of(key))), nil
}

// LocateN appends up to n distinct servers in nginx's retry order: the
// servers of the following ring points. The error wraps [kolco.ErrBadCount]
// when n < 1.
func (c *Consistent) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	start := c.ring.Search(crc32.ChecksumIEEE(bytestr.Of(key)))
	return c.list.AppendN(dst, n, c.ring.Len(), func(step int) int { return c.ring.Walk(start, step) })
}

// Nodes returns the servers that are up, sorted by address.
func (c *Consistent) Nodes() []kolco.Node { return c.list.Nodes() }
