// Package bench compares kolco's placements with the Go consistent hashing
// libraries users would otherwise pick, on the same keys in the same process:
// the ring of Karger et al., "Consistent Hashing and Random Trees" (STOC
// 1997) as written by buraksezer/consistent, stathat/consistent,
// serialx/hashring and groupcache's consistenthash; jump consistent hash
// (Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm",
// 2014) by dgryski/go-jump; rendezvous hashing (Thaler & Ravishankar, "Using
// Name-Based Mappings to Increase Hit Rates", 1998) by dgryski/go-rendezvous;
// and gomemcache's ServerList, hash mod N, as the floor.
//
// It is a module of its own so that the kolco library never depends on its
// competitors. The benchmarks live in bench_test.go; cmd/compare prints the
// whole comparison as one markdown table.
package bench

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/bradfitz/gomemcache/memcache"
	buraksezer "github.com/buraksezer/consistent"
	"github.com/cespare/xxhash/v2"
	jump "github.com/dgryski/go-jump"
	rendezvous "github.com/dgryski/go-rendezvous"
	"github.com/golang/groupcache/consistenthash"
	"github.com/serialx/hashring"
	stathat "github.com/stathat/consistent"

	"github.com/kolco-dev/kolco"
	kjump "github.com/kolco-dev/kolco/jump"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/maglev"
	"github.com/kolco-dev/kolco/ring"
)

// Instance is one built placement seen through a common shape: a lookup
// returning the owner's name, and the library's own way of adding a node.
type Instance struct {
	// Lookup returns the name of the node owning key. It goes through a
	// function value, which costs a call that a program calling the
	// library directly does not pay: it serves the checks of answers
	// (load, movement); timings use Loop.
	Lookup func(key string) string
	// Loop looks up every key in turn, as a program calls the library: a
	// method call on the concrete type inside the loop, which the compiler
	// may inline. It returns the sum of the answers' lengths, so that no
	// lookup can be dropped.
	Loop Loop
	// Add adds one node the library's own way; nil when it has none.
	Add func(id string) error
	// Points is the number of points (or table entries) the placement
	// holds, the divisor of bytes per point.
	Points int
}

// Lib is one placement library under test.
type Lib struct {
	// Name names the library and, where it matters, its hash.
	Name string
	// Short names it in benchmark names.
	Short string
	// Ring reports a consistent hash ring: the libraries kolco's ring is
	// measured against.
	Ring bool
	// Kolco reports a placement of this module.
	Kolco bool
	// DefaultVNodes is the library's own points per node (0: not a ring).
	DefaultVNodes int
	// Configurable reports that the points per node can be set.
	Configurable bool
	// SortsPerNode reports a library that re-sorts all its points for each
	// node it adds, so that a build costs nodes × points × log(points):
	// the comparison skips its largest sizes to stay within minutes.
	SortsPerNode bool
	// New builds the placement over the named nodes with vnodes points
	// each (ignored where not configurable).
	New func(ids []string, vnodes int) (Instance, error)
}

// BuildBudget bounds nodes² × points per node for the libraries that re-sort
// all their points for each node they add (a build of N nodes of P points
// costs N·P·log P per node): sizes above it are not built. A library's own
// default points are built up to the largest size of the tables, 10,000
// nodes × 20 points (N²·P = 2·10⁹), which takes buraksezer/consistent and
// stathat/consistent 2-4 minutes each on the 2-core machine of the README;
// other settings up to 2·10⁷.
const (
	BuildBudget        = 20_000_000
	DefaultBuildBudget = 2_000_000_000
)

// Fits reports whether l is built at n nodes of vnodes points (see
// [BuildBudget]).
func (l Lib) Fits(n, vnodes int) bool {
	cost := n * n * max(vnodes, 1)
	return !l.SortsPerNode || cost <= BuildBudget || vnodes == l.DefaultVNodes && cost <= DefaultBuildBudget
}

// Builds holds libraries built once each, so that the builds that take
// minutes are paid once by every benchmark and table that measures them.
// The zero value is empty and ready.
type Builds struct {
	mu sync.Mutex // guards m
	m  map[string]Instance
}

// Get returns l built over n nodes of vnodes points, building it on the
// first call.
func (b *Builds) Get(l Lib, n, vnodes int) (Instance, error) {
	key := fmt.Sprint(l.Short, "/", n, "/", vnodes)
	b.mu.Lock()
	defer b.mu.Unlock()
	if inst, ok := b.m[key]; ok {
		return inst, nil
	}
	inst, err := l.New(NodeIDs(n), vnodes)
	if err != nil {
		return Instance{}, err
	}
	if b.m == nil {
		b.m = map[string]Instance{}
	}
	b.m[key] = inst
	return inst, nil
}

// NodeIDs returns n node names. They are addresses, because gomemcache's
// ServerList resolves what it is given; the others only hash them.
func NodeIDs(n int) []string { return nodeIDs(0, n) }

func nodeIDs(from, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "127.0.0.1:" + strconv.Itoa(20000+from+i)
	}
	return ids
}

// NewNodeID returns the name of the node added in change measurements.
func NewNodeID(i int) string { return nodeIDs(5000+i, 1)[0] }

// Libs returns every library under test, kolco's first.
func Libs() []Lib {
	return []Lib{
		{Name: "kolco ring (xxh3)", Short: "kolco-ring", Ring: true, Kolco: true, DefaultVNodes: ring.DefaultVNodes, Configurable: true, New: newKolcoRing},
		{Name: "kolco maglev (xxh3)", Short: "kolco-maglev", Kolco: true, New: newKolcoMaglev},
		{Name: "kolco jump (xxh3)", Short: "kolco-jump", Kolco: true, New: newKolcoJump},
		{Name: "buraksezer/consistent (xxhash)", Short: "buraksezer", Ring: true, DefaultVNodes: 20, Configurable: true, SortsPerNode: true, New: newBuraksezer},
		{Name: "stathat/consistent (crc32)", Short: "stathat", Ring: true, DefaultVNodes: 20, Configurable: true, SortsPerNode: true, New: newStathat},
		{Name: "serialx/hashring (md5)", Short: "serialx", Ring: true, DefaultVNodes: 1, Configurable: true, New: newSerialx},
		{Name: "groupcache/consistenthash (crc32)", Short: "groupcache", Ring: true, DefaultVNodes: 50, Configurable: true, New: newGroupcache},
		{Name: "dgryski/go-jump (xxhash)", Short: "go-jump", New: newGoJump},
		{Name: "dgryski/go-rendezvous (xxhash)", Short: "go-rendezvous", New: newGoRendezvous},
		{Name: "gomemcache ServerList (crc32 mod N)", Short: "serverlist", New: newServerList},
	}
}

func kolcoNodes(ids []string) []kolco.Node {
	nodes := make([]kolco.Node, len(ids))
	for i, id := range ids {
		nodes[i] = kolco.Node{ID: id}
	}
	return nodes
}

func newKolcoRing(ids []string, vnodes int) (Instance, error) {
	r, err := ring.New(kolcoNodes(ids), ring.Config{VNodes: vnodes})
	if err != nil {
		return Instance{}, err
	}
	return kolcoInstance(r, r.Points(), RingLocate(r)), nil
}

func newKolcoMaglev(ids []string, _ int) (Instance, error) {
	m, err := maglev.New(kolcoNodes(ids), maglev.Config{})
	if err != nil {
		return Instance{}, err
	}
	return kolcoInstance(m, len(ids), MaglevLocate(m)), nil
}

func newKolcoJump(ids []string, _ int) (Instance, error) {
	j, err := kjump.New(kolcoNodes(ids), kjump.Config{})
	if err != nil {
		return Instance{}, err
	}
	return kolcoInstance(j, len(ids), func(keys []string) (acc int) {
		for _, k := range keys {
			n, _ := j.Locate(k)
			acc += len(n.ID)
		}
		return acc
	}), nil
}

type placement interface {
	kolco.Placement
	kolco.Mutable
}

// kolcoInstance wraps a kolco placement whose loop calls Locate on the
// concrete type, as a program does.
func kolcoInstance(p placement, points int, loop Loop) Instance {
	return Instance{
		Lookup: func(key string) string {
			n, err := p.Locate(key)
			if err != nil {
				return ""
			}
			return n.ID
		},
		Loop:   loop,
		Add:    func(id string) error { return p.Add(kolco.Node{ID: id}) },
		Points: points,
	}
}

// RingLocate is the loop of r.Locate, the lookup users call.
func RingLocate(r *ring.Ring) Loop {
	return func(keys []string) (acc int) {
		for _, k := range keys {
			n, _ := r.Locate(k)
			acc += len(n.ID)
		}
		return acc
	}
}

// RingLocateID is the loop of r.LocateID.
func RingLocateID(r *ring.Ring) Loop {
	return func(keys []string) (acc int) {
		for _, k := range keys {
			id, _ := r.LocateID(k)
			acc += len(id)
		}
		return acc
	}
}

// MaglevLocate is the loop of m.Locate.
func MaglevLocate(m *maglev.Table) Loop {
	return func(keys []string) (acc int) {
		for _, k := range keys {
			n, _ := m.Locate(k)
			acc += len(n.ID)
		}
		return acc
	}
}

// MaglevLocateID is the loop of m.LocateID.
func MaglevLocateID(m *maglev.Table) Loop {
	return func(keys []string) (acc int) {
		for _, k := range keys {
			id, _ := m.LocateID(k)
			acc += len(id)
		}
		return acc
	}
}

type member string

func (m member) String() string { return string(m) }

type xxHasher struct{}

func (xxHasher) Sum64(b []byte) uint64 { return xxhash.Sum64(b) }

func newBuraksezer(ids []string, vnodes int) (Instance, error) {
	cfg := buraksezer.Config{
		Hasher:            xxHasher{},
		PartitionCount:    buraksezer.DefaultPartitionCount,
		ReplicationFactor: vnodes,
		Load:              1.25,
	}
	ms := make([]buraksezer.Member, len(ids))
	for i, id := range ids {
		ms[i] = member(id)
	}
	c := buraksezer.New(ms, cfg)
	return Instance{
		Lookup: func(key string) string { return c.LocateKey([]byte(key)).String() },
		Loop: func(keys []string) (acc int) {
			for _, k := range keys {
				acc += len(c.LocateKey([]byte(k)).String())
			}
			return acc
		},
		Add:    func(id string) error { c.Add(member(id)); return nil },
		Points: len(ids) * vnodes,
	}, nil
}

func newStathat(ids []string, vnodes int) (Instance, error) {
	c := stathat.New()
	c.NumberOfReplicas = vnodes
	c.Set(ids)
	return Instance{
		Lookup: func(key string) string { s, _ := c.Get(key); return s },
		Loop: func(keys []string) (acc int) {
			for _, k := range keys {
				s, _ := c.Get(k)
				acc += len(s)
			}
			return acc
		},
		Add:    func(id string) error { c.Add(id); return nil },
		Points: len(ids) * vnodes,
	}, nil
}

func newSerialx(ids []string, vnodes int) (Instance, error) {
	w := make(map[string]int, len(ids))
	for _, id := range ids {
		w[id] = vnodes
	}
	h := hashring.NewWithWeights(w)
	return Instance{
		Lookup: func(key string) string { s, _ := h.GetNode(key); return s },
		Loop: func(keys []string) (acc int) {
			for _, k := range keys {
				s, _ := h.GetNode(k)
				acc += len(s)
			}
			return acc
		},
		// AddWeightedNode returns a new ring and leaves the old one as it was.
		Add:    func(id string) error { h = h.AddWeightedNode(id, vnodes); return nil },
		Points: len(ids) * vnodes,
	}, nil
}

func newGroupcache(ids []string, vnodes int) (Instance, error) {
	m := consistenthash.New(vnodes, nil)
	m.Add(ids...)
	return Instance{
		Lookup: m.Get,
		Loop: func(keys []string) (acc int) {
			for _, k := range keys {
				acc += len(m.Get(k))
			}
			return acc
		},
		Add:    func(id string) error { m.Add(id); return nil },
		Points: len(ids) * vnodes,
	}, nil
}

func newGoJump(ids []string, _ int) (Instance, error) {
	ids = append([]string(nil), ids...)
	return Instance{
		Lookup: func(key string) string { return ids[jump.Hash(xxhash.Sum64String(key), len(ids))] },
		Loop: func(keys []string) (acc int) {
			for _, k := range keys {
				acc += len(ids[jump.Hash(xxhash.Sum64String(k), len(ids))])
			}
			return acc
		},
		Add:    func(id string) error { ids = append(ids, id); return nil },
		Points: len(ids),
	}, nil
}

func newGoRendezvous(ids []string, _ int) (Instance, error) {
	r := rendezvous.New(ids, xxhash.Sum64String)
	return Instance{
		Lookup: r.Lookup,
		Loop: func(keys []string) (acc int) {
			for _, k := range keys {
				acc += len(r.Lookup(k))
			}
			return acc
		},
		Add:    func(id string) error { r.Add(id); return nil },
		Points: len(ids),
	}, nil
}

func newServerList(ids []string, _ int) (Instance, error) {
	var sl memcache.ServerList
	if err := sl.SetServers(ids...); err != nil {
		return Instance{}, err
	}
	all := append([]string(nil), ids...)
	return Instance{
		Lookup: func(key string) string {
			a, _ := sl.PickServer(key)
			return a.String()
		},
		Loop: func(keys []string) (acc int) {
			for _, k := range keys {
				a, _ := sl.PickServer(k)
				acc += len(a.String())
			}
			return acc
		},
		Add: func(id string) error {
			all = append(all, id)
			return sl.SetServers(all...)
		},
		Points: len(ids),
	}, nil
}

// Loop looks up each of keys in turn and returns a sum over the answers
// that keeps any lookup from being dropped.
type Loop func(keys []string) int

// HashAlone is the baseline of the lookup targets: keyhash.XXH3, the
// default key hash of kolco's ring and maglev, of each key, and nothing
// else. The sum of the hashes' top bits keeps the calls from being dropped.
func HashAlone(keys []string) (acc int) {
	for _, k := range keys {
		acc += int(keyhash.XXH3(k) >> 63)
	}
	return acc
}

// RandomReads is the memory floor of a lookup in a structure of the given
// size: it hashes each key like HashAlone, then makes that many random
// reads in a table of bytes (rounded down to a power of two, at least one
// word), each at an address that depends on the word the previous one
// read, as a search's next load depends on the last. The table holds
// random words, so every page is real memory.
func RandomReads(bytes, reads int) Loop {
	table := make([]uint64, 1<<max(bits.Len(uint(bytes/8))-1, 0))
	r := rand.New(rand.NewPCG(7, 11))
	for i := range table {
		table[i] = r.Uint64()
	}
	mask := uint64(len(table) - 1)
	return func(keys []string) (acc int) {
		for _, k := range keys {
			h := keyhash.XXH3(k)
			for range reads {
				h ^= table[h&mask]
			}
			acc += int(h >> 63)
		}
		return acc
	}
}

// Keys returns n keys "user:<i>" in a fixed order, shared by every library.
func Keys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("user:%d", i*7919)
	}
	return keys
}
