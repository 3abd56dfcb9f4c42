package gossip

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
)

// Roles a member of the gossip pool takes, as its metadata says.
const (
	// RoleNode is a member that stands for a cache server: its metadata
	// names the node, its address, weight and zone. A sidecar beside
	// each server registers one ("kolco members register --gossip").
	RoleNode = "node"
	// RoleObserver is a member that only follows the pool, such as a
	// proxy or a client: it gossips and detects failures with the others
	// but is never placed.
	RoleObserver = "observer"
)

// metaVersion is the version of the metadata encoding. A member whose
// metadata carries another is refused, not guessed at: a newer kolco
// that changed the meaning of a field must not be read as this one.
const metaVersion = 1

// MaxMetaSize is the largest metadata a member may carry, memberlist's
// limit (memberlist.MetaMaxSize): a node's ID, address and zone must fit.
const MaxMetaSize = 512

// Meta is what a member of the pool tells the others about itself, in
// memberlist's node metadata.
type Meta struct {
	// Role is RoleNode or RoleObserver.
	Role string
	// Node is the node a RoleNode member stands for: its ID (equal to
	// the member's name in the pool), address, weight and zone. Zero for
	// an observer.
	Node kolco.Node
	// Drained is true for a node that is listed but takes no keys.
	Drained bool
}

// metaWire is Meta as it travels: JSON, short keys, a version first.
type metaWire struct {
	V       int     `json:"v"`
	Role    string  `json:"role"`
	ID      string  `json:"id,omitempty"`
	Addr    string  `json:"addr,omitempty"`
	Weight  float64 `json:"weight,omitempty"`
	Zone    string  `json:"zone,omitempty"`
	Drained bool    `json:"drained,omitempty"`
}

// Check reports whether m is metadata a member may carry: a known role,
// a valid node with an address for RoleNode, no node for RoleObserver.
// The error wraps [membership.ErrBadContent] (and, for a bad node, the
// sentinel of kolco.Node.Validate).
func (m Meta) Check() error {
	switch m.Role {
	case RoleNode:
		if err := m.Node.Validate(); err != nil {
			return fmt.Errorf("%w: gossip metadata: %w", membership.ErrBadContent, err)
		}
		if m.Node.Addr == "" {
			return fmt.Errorf("%w: gossip metadata: node %q has no address", membership.ErrBadContent, m.Node.ID)
		}
	case RoleObserver:
		if m.Node != (kolco.Node{}) || m.Drained {
			return fmt.Errorf("%w: gossip metadata: an observer carries no node", membership.ErrBadContent)
		}
	default:
		return fmt.Errorf("%w: gossip metadata: role %q: want %s or %s", membership.ErrBadContent, m.Role, RoleNode, RoleObserver)
	}
	return nil
}

// EncodeMeta returns m's encoding. The error wraps
// [membership.ErrBadContent] for metadata that fails [Meta.Check] or is
// longer than [MaxMetaSize].
func EncodeMeta(m Meta) ([]byte, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	w := metaWire{V: metaVersion, Role: m.Role, ID: m.Node.ID, Addr: m.Node.Addr, Weight: m.Node.Weight,
		Zone: m.Node.Zone, Drained: m.Drained}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("%w: gossip metadata: %w", membership.ErrBadContent, err)
	}
	if len(b) > MaxMetaSize {
		return nil, fmt.Errorf("%w: gossip metadata of %d bytes, over the %d memberlist carries", membership.ErrBadContent, len(b), MaxMetaSize)
	}
	return b, nil
}

// ParseMeta decodes metadata another member sent. The error wraps
// [membership.ErrBadContent]: not JSON, unknown keys, a version other
// than this kolco's, or metadata that fails [Meta.Check].
func ParseMeta(b []byte) (Meta, error) {
	if len(b) == 0 {
		return Meta{}, fmt.Errorf("%w: gossip metadata: empty (not a kolco member)", membership.ErrBadContent)
	}
	if len(b) > MaxMetaSize {
		return Meta{}, fmt.Errorf("%w: gossip metadata of %d bytes, over %d", membership.ErrBadContent, len(b), MaxMetaSize)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var w metaWire
	if err := dec.Decode(&w); err != nil {
		return Meta{}, fmt.Errorf("%w: gossip metadata: %w", membership.ErrBadContent, err)
	}
	if dec.More() {
		return Meta{}, fmt.Errorf("%w: gossip metadata: data after the object", membership.ErrBadContent)
	}
	if w.V != metaVersion {
		return Meta{}, fmt.Errorf("%w: gossip metadata version %d: this kolco reads %d", membership.ErrBadContent, w.V, metaVersion)
	}
	m := Meta{Role: w.Role, Node: kolco.Node{ID: w.ID, Addr: w.Addr, Weight: w.Weight, Zone: w.Zone}, Drained: w.Drained}
	if err := m.Check(); err != nil {
		return Meta{}, err
	}
	return m, nil
}

// errNotNode is wrapped when a member's name is not the ID its metadata
// gives: the pool's names are what keeps two members from claiming one
// node.
var errNotNode = errors.New("the member's name is not its node's ID")
