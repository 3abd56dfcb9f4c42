package etcd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
	"github.com/kolco-dev/kolco/membership"
)

// maxValue bounds a node's value: a few fields, never a document.
const maxValue = 4 << 10

// maxName bounds a node ID, a zone and an address.
const maxName = 1 << 10

// Member is a node as the store records it.
type Member struct {
	kolco.Node
	// Drained is true for a node that stays listed, with its address,
	// but takes no keys (see [Edit]).
	Drained bool
	// Lease is the etcd lease the node is registered with (see
	// [Store.Register]); 0 for a node added for good.
	Lease int64
	// Revision is the store revision of the member's last write.
	Revision int64
}

// value is a node's value in the store, as JSON:
// {"weight": 2, "zone": "eu-1", "addr": "10.0.0.7:11211", "drained": true},
// every field optional; an empty value is a node of weight 1.
type value struct {
	Weight  *float64 `json:"weight,omitempty"`
	Zone    string   `json:"zone,omitempty"`
	Addr    string   `json:"addr,omitempty"`
	Drained bool     `json:"drained,omitempty"`
}

// ParseValue reads the member stored under node ID id from its value. An
// empty value is a node of weight 1 without zone or address; unknown fields
// are refused, so that a misspelt "wieght" is not read as weight 1. The
// error wraps [membership.ErrBadContent], and [kolco.ErrBadWeight] or
// [kolco.ErrBadNodeID] where they apply.
func ParseValue(id string, data []byte) (Member, error) {
	bad := func(format string, args ...any) (Member, error) {
		return Member{}, fmt.Errorf("%w: node %q: %s", membership.ErrBadContent, id, fmt.Sprintf(format, args...))
	}
	if err := checkName("ID", id); err != nil {
		return Member{}, fmt.Errorf("%w: node %q: %w", membership.ErrBadContent, id, err)
	}
	if len(data) > maxValue {
		return bad("value longer than %d bytes", maxValue)
	}
	var v value
	if len(bytes.TrimSpace(data)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return bad("value is not a node's JSON (%v)", err)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return bad("value has more than one JSON object")
		}
	}
	m := Member{Node: kolco.Node{ID: id, Zone: v.Zone, Addr: v.Addr}, Drained: v.Drained}
	if v.Weight != nil {
		if err := nodeset.CheckWeight(*v.Weight); err != nil {
			return Member{}, fmt.Errorf("%w: node %q: %w", membership.ErrBadContent, id, err)
		}
		if *v.Weight != 1 { // weight 1 is stored as the zero value, as an absent weight
			m.Weight = *v.Weight
		}
	}
	for _, f := range []struct{ name, s string }{{"zone", m.Zone}, {"addr", m.Addr}} {
		if f.s == "" {
			continue
		}
		if err := checkName(f.name, f.s); err != nil {
			return bad("%v", err)
		}
	}
	return m, nil
}

// EncodeValue returns the value that stores m: JSON with the fields that
// differ from their defaults.
func EncodeValue(m Member) []byte {
	v := value{Zone: m.Zone, Addr: m.Addr, Drained: m.Drained}
	if m.Weight != 0 && m.Weight != 1 {
		w := m.Weight
		v.Weight = &w
	}
	data, _ := json.Marshal(v) // a struct of plain fields always encodes
	return data
}

// checkName reports whether s can name a node, a zone or an address:
// non-empty, valid UTF-8, at most maxName bytes, with no space or control
// character, so that it prints in one column and reads back from a node
// file. The error wraps [kolco.ErrBadNodeID] for an ID.
func checkName(what, s string) error {
	var why string
	switch {
	case s == "":
		why = "empty"
	case len(s) > maxName:
		why = fmt.Sprintf("longer than %d bytes", maxName)
	case !utf8.ValidString(s):
		why = "not valid UTF-8"
	case strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }):
		why = "a space or control character"
	default:
		return nil
	}
	if what == "ID" {
		return fmt.Errorf("%w: %s", kolco.ErrBadNodeID, why)
	}
	return fmt.Errorf("%s %q: %s", what, s, why)
}
