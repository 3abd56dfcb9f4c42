package rediscluster

import (
	"fmt"
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
	"github.com/kolco-dev/kolco/internal/nodeset"
	"github.com/kolco-dev/kolco/slots"
)

// SlotCount is the number of Redis Cluster hash slots.
const SlotCount = slots.DefaultCount

// SlotRange is an inclusive range of slots, First <= Last.
type SlotRange struct {
	First, Last int
}

// Master is one master of the cluster with the slots it serves.
type Master struct {
	// ID is the node ID (40 hex characters); empty means Addr.
	ID string
	// Addr is the client address, "ip:port".
	Addr string
	// Slots are the ranges the master serves.
	Slots []SlotRange
}

// Cluster is one snapshot of a Redis Cluster's slot table. It is immutable
// and safe for concurrent use; lookups do not allocate.
type Cluster struct {
	list  nodeset.List
	owner [SlotCount]uint16 // slot -> master index
	runs  []int             // first slot of each run of one owner, ascending
}

var _ kolco.Placement = (*Cluster)(nil)

// New returns the placement of a cluster whose masters serve these slots.
// Every slot must be served by exactly one master. The error wraps
// [kolco.ErrNoNodes] for no masters, [kolco.ErrDuplicateNode] for an ID
// given twice, [kolco.ErrBadNodeID] for a master without ID and address,
// and [kolco.ErrBadConfig] for a range outside 0-16383, a slot served twice
// or a slot not served.
func New(masters []Master) (*Cluster, error) {
	if len(masters) > 1<<16 {
		return nil, fmt.Errorf("%w: redis: %d masters", kolco.ErrBadConfig, len(masters))
	}
	c := &Cluster{}
	served := make([]bool, SlotCount)
	nodes := make([]kolco.Node, len(masters))
	for i, m := range masters {
		id := m.ID
		if id == "" {
			id = m.Addr
		}
		count := 0
		for _, r := range m.Slots {
			if r.First < 0 || r.Last >= SlotCount || r.First > r.Last {
				return nil, fmt.Errorf("%w: redis: %s: slot range %d-%d outside 0-%d", kolco.ErrBadConfig, id, r.First, r.Last, SlotCount-1)
			}
			for s := r.First; s <= r.Last; s++ {
				if served[s] {
					return nil, fmt.Errorf("%w: redis: slot %d served twice", kolco.ErrBadConfig, s)
				}
				served[s] = true
				c.owner[s] = uint16(i)
			}
			count += r.Last - r.First + 1
		}
		nodes[i] = kolco.Node{ID: id, Addr: m.Addr, Weight: float64(max(count, 1))}
	}
	list, err := nodeset.NewList(nodes, nil)
	if err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	if s := slices.Index(served, false); s >= 0 {
		return nil, fmt.Errorf("%w: redis: slot %d is not served", kolco.ErrBadConfig, s)
	}
	c.list = list
	for s := range SlotCount {
		if s == 0 || c.owner[s] != c.owner[s-1] {
			c.runs = append(c.runs, s)
		}
	}
	return c, nil
}

// Slot returns key's hash slot, as CLUSTER KEYSLOT reports it.
func Slot(key []byte) int { return slots.KeySlot(bytestr.String(key)) }

// Index returns the position, in the list given to [New], of the master
// that serves key.
func (c *Cluster) Index(key []byte) int { return int(c.owner[Slot(key)]) }

// IndexSlot returns the position of the master that serves slot, which
// must be in 0-16383.
func (c *Cluster) IndexSlot(slot int) int { return int(c.owner[slot]) }

// Locate returns the master that serves key. The error is always nil.
func (c *Cluster) Locate(key string) (*kolco.Node, error) {
	return c.list.At(int(c.owner[slots.KeySlot(key)])), nil
}

// LocateN appends up to n distinct masters: the one serving key, then the
// masters of the following slot ranges in slot order. The error wraps
// [kolco.ErrBadCount] when n < 1.
func (c *Cluster) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	slot := slots.KeySlot(key)
	r, found := slices.BinarySearch(c.runs, slot)
	if !found {
		r--
	}
	return c.list.AppendN(dst, n, len(c.runs), func(step int) int {
		return int(c.owner[c.runs[(r+step)%len(c.runs)]])
	})
}

// Nodes returns the masters sorted by ID.
func (c *Cluster) Nodes() []kolco.Node { return c.list.Nodes() }
