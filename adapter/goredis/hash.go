package goredis

import (
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/shards"
)

// NewConsistentHash is RingOptions.NewConsistentHash: it returns the
// placement of the current membership, whatever shards live names, with
// the shards not in live skipped. Get returns only names in live, and ""
// (go-redis's "all shards are down") when none of the membership's shards
// is live.
func (s *Shards) NewConsistentHash(live []string) redis.ConsistentHash {
	t := s.cur.Table()
	h := &liveHash{t: t, names: make([]string, t.Len()), up: make([]bool, t.Len())}
	for i := range t.Len() {
		h.names[i] = t.Node(i).ID
	}
	for _, name := range live {
		if i, ok := slices.BinarySearch(h.names, name); ok {
			h.up[i] = true
			h.live++
		}
	}
	return h
}

// liveHash is the placement of one table with some of its shards down.
type liveHash struct {
	t     *shards.Table[string]
	names []string // by position in t
	up    []bool   // by position in t
	live  int      // how many are up
}

// buffers holds the scratch space of preference lists, so that a key
// whose owner is down allocates nothing either once the pool is warm.
var buffers = sync.Pool{New: func() any { return new(preference) }}

type preference struct {
	order []int
	nodes []kolco.Node
}

// Get returns the shard for key (go-redis passes the text of its hash tag):
// the owner when it is live, else the first live shard of the key's
// preference list.
func (h *liveHash) Get(key string) string {
	i, err := h.t.Index(key)
	if err != nil || h.live == 0 {
		return ""
	}
	if h.up[i] {
		return h.names[i]
	}
	p := buffers.Get().(*preference)
	defer buffers.Put(p)
	p.order, p.nodes, err = h.t.Preference(p.order[:0], p.nodes, key, len(h.names))
	if err != nil {
		return ""
	}
	for _, j := range p.order {
		if h.up[j] {
			return h.names[j]
		}
	}
	return ""
}

// String lists the shards, the down ones marked, for go-redis's logs.
func (h *liveHash) String() string {
	var b strings.Builder
	for i, n := range h.names {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(n)
		if !h.up[i] {
			b.WriteString("(down)")
		}
	}
	return b.String()
}
