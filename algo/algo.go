// Package algo builds any placement algorithm of this module by name, so
// that the kolco command, the simulator and the proxy's configuration can
// offer them all behind one flag or key.
package algo

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/anchor"
	"github.com/kolco-dev/kolco/binomial"
	"github.com/kolco-dev/kolco/bounded"
	"github.com/kolco-dev/kolco/dx"
	"github.com/kolco-dev/kolco/flip"
	"github.com/kolco-dev/kolco/jump"
	"github.com/kolco-dev/kolco/jumpback"
	"github.com/kolco-dev/kolco/jumpbackanchor"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/maglev"
	"github.com/kolco-dev/kolco/modulo"
	"github.com/kolco-dev/kolco/multiprobe"
	"github.com/kolco-dev/kolco/power"
	"github.com/kolco-dev/kolco/rendezvous"
	"github.com/kolco-dev/kolco/ring"
	"github.com/kolco-dev/kolco/slots"
)

// ErrUnknown is returned by [New] for a name it does not know.
var ErrUnknown = errors.New("algo: unknown algorithm")

// Placement is what every algorithm built here offers: lookups, also by
// ID and by index, changes of membership, and an identity for
// kolco.Fingerprint.
type Placement interface {
	kolco.Placement
	kolco.IDLocator
	kolco.IndexLocator
	kolco.Mutable
	kolco.Identity
}

// Options configure an algorithm. Each algorithm reads the fields that apply
// to it and ignores the rest; zero values mean the algorithm's defaults.
type Options struct {
	// Hash is the key hash; nil means the algorithm's default: xxh3, md5
	// in article mode, CRC16 (as Redis Cluster) for slots. Every hash of
	// package keyhash works with every algorithm: where an algorithm needs
	// well-mixed bits, a weak hash (fnv1a, crc32) is finalized (see each
	// package's documentation and keyhash.Finalized).
	Hash keyhash.Func
	// VNodes is the ring's points per unit of weight.
	VNodes int
	// ZoneAware makes the ring's replica sets take distinct zones first.
	ZoneAware bool
	// Article selects the semantics of the article this module reproduces
	// (see ring.ArticleConfig): for the ring md5 and 100 points, for
	// rendezvous the md5 of "node:key", unless Hash or VNodes say
	// otherwise.
	Article bool
	// TableSize is maglev's lookup table size (a prime).
	TableSize int
	// Slots is the number of hash slots.
	Slots int
	// Capacity is anchor's fixed number of buckets, and dx's of slots (a
	// power of two).
	Capacity int
	// Probes is multiprobe's number of probes per key.
	Probes int
	// Epsilon is bounded's load slack: a node holds at most
	// ceil((1+Epsilon) * average).
	Epsilon float64
}

// Info describes one algorithm.
type Info struct {
	// Name is what New takes.
	Name string
	// Summary is one line for help texts.
	Summary string
	// HistoryDependent reports that the same node set reached by different
	// changes may place keys differently: the placement implements
	// kolco.StateMarshaler, and [Restore] rebuilds it from its state.
	HistoryDependent bool
	// Options are the fields of [Options] the algorithm reads; it ignores
	// the others, so that a command offering them as flags can refuse
	// those that would change nothing.
	Options Option
	// build returns the placement over nodes in state; empty state means
	// the state New builds.
	build func(nodes []kolco.Node, o Options, state []byte) (Placement, error)
}

// stateless returns the build function of a history-independent
// algorithm, whose placement follows from its node set: it refuses any
// state.
func stateless(name string, build func([]kolco.Node, Options) (Placement, error)) func([]kolco.Node, Options, []byte) (Placement, error) {
	return func(nodes []kolco.Node, o Options, state []byte) (Placement, error) {
		if len(state) > 0 {
			return nil, fmt.Errorf("%s: %w: its placement follows from the node set, it keeps no state", name, kolco.ErrBadState)
		}
		return build(nodes, o)
	}
}

// placement hands on an algorithm's result as a Placement. Returning the
// constructor's (*T, error) directly would turn its nil *T into a non-nil
// interface holding a nil pointer: p == nil would be false beside the
// error, and the caller's first Locate would panic.
func placement[P Placement](p P, err error) (Placement, error) {
	if err != nil {
		return nil, err
	}
	return p, nil
}

var all = []Info{
	{Name: "ring", Summary: "consistent hash ring with virtual nodes (Karger et al. 1997)",
		Options: HashOption | VNodesOption | ZoneAwareOption | ArticleOption,
		build:   stateless("ring", newRing)},
	{Name: "modulo", Summary: "hash % N, the baseline that moves N/(N+1) of keys",
		Options: HashOption,
		build: stateless("modulo", func(n []kolco.Node, o Options) (Placement, error) {
			return placement(modulo.New(n, modulo.Config{Hash: o.Hash}))
		})},
	{Name: "slots", Summary: "Redis-Cluster-style hash slots with a slot -> node map", HistoryDependent: true,
		Options: HashOption | SlotsOption,
		build: func(n []kolco.Node, o Options, state []byte) (Placement, error) {
			return placement(slots.Restore(n, slots.Config{Count: o.Slots, Hash: o.Hash}, state))
		}},
	{Name: "rendezvous", Summary: "highest random weight (Thaler & Ravishankar 1998)",
		Options: HashOption | ArticleOption,
		build:   stateless("rendezvous", newRendezvous)},
	{Name: "jump", Summary: "jump consistent hash with arbitrary removals (Lamping & Veach 2014; MementoHash 2023)", HistoryDependent: true,
		Options: HashOption,
		build: func(n []kolco.Node, o Options, state []byte) (Placement, error) {
			return placement(jump.Restore(n, jump.Config{Hash: o.Hash}, state))
		}},
	{Name: "jumpback", Summary: "JumpBackHash with arbitrary removals (Ertl 2024; MementoHash 2023)", HistoryDependent: true,
		Options: HashOption,
		build: func(n []kolco.Node, o Options, state []byte) (Placement, error) {
			return placement(jumpback.Restore(n, jumpback.Config{Hash: o.Hash}, state))
		}},
	{Name: "jumpbackanchor", Summary: "JumpBackAnchorHash: JumpBackHash with AnchorHash's removals and no fixed capacity (Ertl, hash4j 2025)", HistoryDependent: true,
		Options: HashOption,
		build: func(n []kolco.Node, o Options, state []byte) (Placement, error) {
			return placement(jumpbackanchor.Restore(n, jumpbackanchor.Config{Hash: o.Hash}, state))
		}},
	{Name: "maglev", Summary: "Maglev lookup table (Eisenbud et al. 2016)",
		Options: HashOption | TableSizeOption,
		build: stateless("maglev", func(n []kolco.Node, o Options) (Placement, error) {
			return placement(maglev.New(n, maglev.Config{Hash: o.Hash, TableSize: o.TableSize}))
		})},
	{Name: "anchor", Summary: "AnchorHash with fixed capacity (Mendelson et al. 2020)", HistoryDependent: true,
		Options: HashOption | CapacityOption,
		build: func(n []kolco.Node, o Options, state []byte) (Placement, error) {
			return placement(anchor.Restore(n, anchor.Config{Hash: o.Hash, Capacity: o.Capacity}, state))
		}},
	{Name: "flip", Summary: "FlipHash with arbitrary removals (Masson & Lee 2024; MementoHash 2023)", HistoryDependent: true,
		Options: HashOption,
		build: func(n []kolco.Node, o Options, state []byte) (Placement, error) {
			return placement(flip.Restore(n, flip.Config{Hash: o.Hash}, state))
		}},
	{Name: "binomial", Summary: "BinomialHash with arbitrary removals (Coluzzi et al. 2024; MementoHash 2023)", HistoryDependent: true,
		Options: HashOption,
		build: func(n []kolco.Node, o Options, state []byte) (Placement, error) {
			return placement(binomial.Restore(n, binomial.Config{Hash: o.Hash}, state))
		}},
	{Name: "power", Summary: "power consistent hash with arbitrary removals (Leu 2023; MementoHash 2023)", HistoryDependent: true,
		Options: HashOption,
		build: func(n []kolco.Node, o Options, state []byte) (Placement, error) {
			return placement(power.Restore(n, power.Config{Hash: o.Hash}, state))
		}},
	{Name: "dx", Summary: "DxHash with weights and fixed capacity (Dong et al. 2021)", HistoryDependent: true,
		Options: HashOption | CapacityOption,
		build: func(n []kolco.Node, o Options, state []byte) (Placement, error) {
			return placement(dx.Restore(n, dx.Config{Hash: o.Hash, Capacity: o.Capacity}, state))
		}},
	{Name: "multiprobe", Summary: "multi-probe consistent hashing, one point per node (Appleton & O'Reilly 2015)",
		Options: HashOption | ProbesOption,
		build: stateless("multiprobe", func(n []kolco.Node, o Options) (Placement, error) {
			return placement(multiprobe.New(n, multiprobe.Config{Hash: o.Hash, Probes: o.Probes}))
		})},
	{Name: "bounded", Summary: "consistent hashing with bounded loads (Mirrokni et al., SODA 2018; arXiv 2016); Locate is the ring owner, Assign and Acquire bound the load",
		Options: HashOption | VNodesOption | EpsilonOption,
		build: stateless("bounded", func(n []kolco.Node, o Options) (Placement, error) {
			return placement(bounded.New(n, bounded.Config{Hash: o.Hash, Epsilon: o.Epsilon, VNodes: o.VNodes}))
		})},
}

func newRendezvous(n []kolco.Node, o Options) (Placement, error) {
	cfg := rendezvous.Config{Hash: o.Hash}
	if o.Article { // the article's one-liner: md5 of "node:key"
		cfg.Separator = ":"
		if cfg.Hash == nil {
			cfg.Hash = keyhash.MD5
		}
	}
	return placement(rendezvous.New(n, cfg))
}

func newRing(nodes []kolco.Node, o Options) (Placement, error) {
	cfg := ring.Config{VNodes: o.VNodes, Hash: o.Hash, ZoneAware: o.ZoneAware}
	if o.Article {
		cfg = ring.ArticleConfig()
		cfg.ZoneAware = o.ZoneAware
		if o.VNodes != 0 {
			cfg.VNodes = o.VNodes
		}
		if o.Hash != nil {
			cfg.Hash = o.Hash
		}
	}
	return placement(ring.New(nodes, cfg))
}

// All returns every algorithm, sorted by name.
func All() []Info {
	out := append([]Info(nil), all...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns the names New accepts, sorted.
func Names() []string {
	var names []string
	for _, a := range All() {
		names = append(names, a.Name)
	}
	return names
}

// HistoryDependent returns the names of the history-dependent algorithms,
// those whose placement a state decides (see [Restore]), sorted.
func HistoryDependent() []string {
	var names []string
	for _, a := range All() {
		if a.HistoryDependent {
			names = append(names, a.Name)
		}
	}
	return names
}

// Lookup returns the algorithm with the given name.
func Lookup(name string) (Info, bool) {
	for _, a := range all {
		if strings.EqualFold(a.Name, name) {
			return a, true
		}
	}
	return Info{}, false
}

// New builds the algorithm name over nodes. The error wraps [ErrUnknown]
// for an unknown name, or the algorithm's own errors (kolco.ErrBadConfig,
// kolco.ErrDuplicateNode, ...).
func New(name string, nodes []kolco.Node, opts Options) (Placement, error) {
	return Restore(name, nodes, opts, nil)
}

// Restore builds the algorithm name over nodes in state, the placement
// state that [State] returned, in this process or another: for a
// history-dependent algorithm (jump, jumpback, jumpbackanchor, flip,
// binomial, power, anchor, dx, slots) it places
// every key as the placement that returned the state, and changes as it
// would. Empty state gives the placement of New; a history-independent
// algorithm takes only that. The error wraps [ErrUnknown] for an unknown
// name, kolco.ErrBadState for a state that is not one of this algorithm's
// over these nodes (or any state for a history-independent algorithm), or
// the algorithm's own errors as for New.
func Restore(name string, nodes []kolco.Node, opts Options, state []byte) (Placement, error) {
	a, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknown, name, strings.Join(Names(), ", "))
	}
	return a.build(nodes, opts, state)
}

// State returns the state that, with the algorithm, its options and the
// node set, decides where p places keys: nil for a history-independent
// placement, whose node set decides alone; else p's canonical encoding
// (kolco.StateMarshaler). Keep it with the node set to [Restore] the
// placement after a restart, or in a new process that must agree.
func State(p kolco.Placement) []byte {
	if m, ok := p.(kolco.StateMarshaler); ok {
		return m.MarshalState()
	}
	return nil
}

// Option names one field of [Options]; an Option value may hold several,
// as a set of bits.
type Option uint16

// The fields of Options.
const (
	HashOption Option = 1 << iota
	VNodesOption
	ZoneAwareOption
	ArticleOption
	TableSizeOption
	SlotsOption
	CapacityOption
	ProbesOption
	EpsilonOption
)

// Has reports whether every option of x is in o.
func (o Option) Has(x Option) bool { return o&x == x }
