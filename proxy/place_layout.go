package proxy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/keyhash"
)

// layout is the placement of a pool of a kolco distribution over its
// configured servers: what the configuration decides, never the servers'
// health (a server marked down keeps its place; lookups pass over it, see
// [placement.standIn]). It is immutable once built: a change applies to a
// copy (see change), so that the placement requests route by is never
// changed under them and the one it replaces stays whole.
type layout struct {
	settings settings
	p        algo.Placement
	// nodes is p.Nodes(): sorted by ID, the positions LocateIndex answers.
	nodes []kolco.Node
	// fingerprint is kolco.Fingerprint(p): equal for two layouts exactly
	// when they place every key alike, history included.
	fingerprint string
}

// settings are what decides a pool's algorithm and its options, apart
// from its servers: a change of servers applies to a placement of the same
// settings, and a change of settings builds the placement afresh.
type settings struct {
	Distribution string
	KeyHash      string
	VNodes       int
	ZoneAware    bool
}

// settingsOf returns the placement settings of a pool.
func settingsOf(cfg *PoolConfig) settings {
	return settings{Distribution: cfg.Distribution, KeyHash: cfg.KeyHash, VNodes: cfg.VNodes, ZoneAware: len(cfg.Zones) > 0}
}

// historyDependent reports whether the settings name an algorithm whose
// placement depends on the order of past changes, not only on the node
// set (jump, anchor, dx, slots, ...): its state must be kept to place
// keys alike after a restart.
func (s settings) historyDependent() bool {
	a, ok := algo.Lookup(s.Distribution)
	return ok && a.HistoryDependent
}

// options returns the algorithm options of the settings.
func (s settings) options() (algo.Options, error) {
	var h keyhash.Func // none: the algorithm's own (CRC16 for slots)
	if s.KeyHash != "" {
		var err error
		if h, err = keyhash.Parse(s.KeyHash); err != nil {
			return algo.Options{}, err
		}
	}
	return algo.Options{Hash: h, VNodes: s.VNodes, ZoneAware: s.ZoneAware}, nil
}

// newLayout builds the placement of the settings over nodes from state,
// the state algo.State returned (nil: as algo.New builds it).
func newLayout(s settings, nodes []kolco.Node, state []byte) (*layout, error) {
	opts, err := s.options()
	if err != nil {
		return nil, err
	}
	p, err := algo.Restore(s.Distribution, nodes, opts, state)
	if err != nil {
		return nil, err
	}
	return finishLayout(s, p)
}

func finishLayout(s settings, p algo.Placement) (*layout, error) {
	fp, err := kolco.Fingerprint(p)
	if err != nil {
		return nil, err
	}
	return &layout{settings: s, p: p, nodes: p.Nodes(), fingerprint: fp}, nil
}

// change returns the layout that follows l after the change that turns its
// node set into nodes (kolco.Diff), applied by Mutable.Apply to a copy
// of l's placement restored from its state: a history-dependent algorithm
// keeps every surviving key in place, as it would applying the change in
// place. A change with nothing in it returns l itself. The error is the
// algorithm's refusal of the change, or of the copy.
func (l *layout) change(nodes []kolco.Node) (*layout, kolco.Change, error) {
	c := kolco.Diff(l.nodes, nodes)
	if c.Empty() {
		return l, c, nil
	}
	opts, err := l.settings.options()
	if err != nil {
		return nil, c, err
	}
	next, err := algo.Restore(l.settings.Distribution, l.nodes, opts, algo.State(l.p))
	if err != nil {
		return nil, c, fmt.Errorf("copying the placement to change it: %w", err)
	}
	if err := next.Apply(c); err != nil {
		return nil, c, err
	}
	nl, err := finishLayout(l.settings, next)
	return nl, c, err
}

// index returns the position of the node id in l.nodes, or -1.
func (l *layout) index(id string) int {
	i, ok := slices.BinarySearchFunc(l.nodes, id, func(n kolco.Node, id string) int { return strings.Compare(n.ID, id) })
	if !ok {
		return -1
	}
	return i
}

// state returns what, beside the node set and the settings, decides where
// l places keys: nil for a history-independent algorithm.
func (l *layout) state() []byte { return algo.State(l.p) }

// describeChange returns the IDs a change removes, adds and updates, for
// the log.
func describeChange(c kolco.Change) (removed, added, updated []string) {
	for _, n := range c.Add {
		added = append(added, n.ID)
	}
	for _, n := range c.Update {
		updated = append(updated, n.ID)
	}
	return c.Remove, added, updated
}
