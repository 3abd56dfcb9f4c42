package etcd_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/etcd"
)

func TestParseValue(t *testing.T) {
	for _, c := range []struct {
		name, id, value string
		want            etcd.Member
		errs            []error
	}{
		{"empty", "a", "", etcd.Member{Node: kolco.Node{ID: "a"}}, nil},
		{"all fields", "a", `{"weight": 2.5, "zone": "eu-1", "addr": "10.0.0.1:11211", "drained": true}`,
			etcd.Member{Node: kolco.Node{ID: "a", Weight: 2.5, Zone: "eu-1", Addr: "10.0.0.1:11211"}, Drained: true}, nil},
		{"weight 1 reads as the default", "a", `{"weight": 1}`, etcd.Member{Node: kolco.Node{ID: "a"}}, nil},
		{"unix socket", "a", `{"addr": "/run/mc.sock"}`, etcd.Member{Node: kolco.Node{ID: "a", Addr: "/run/mc.sock"}}, nil},
		{"misspelt field", "a", `{"wieght": 2}`, etcd.Member{}, nil},
		{"zero weight", "a", `{"weight": 0}`, etcd.Member{}, []error{kolco.ErrBadWeight}},
		{"negative weight", "a", `{"weight": -2}`, etcd.Member{}, []error{kolco.ErrBadWeight}},
		{"weight as text", "a", `{"weight": "2"}`, etcd.Member{}, nil},
		{"not an object", "a", `"a"`, etcd.Member{}, nil},
		{"two objects", "a", `{} {}`, etcd.Member{}, nil},
		{"truncated", "a", `{"weight": 2`, etcd.Member{}, nil},
		{"zone with a space", "a", `{"zone": "eu 1"}`, etcd.Member{}, nil},
		{"empty ID", "", `{}`, etcd.Member{}, []error{kolco.ErrBadNodeID}},
		{"ID with a tab", "a\tb", `{}`, etcd.Member{}, []error{kolco.ErrBadNodeID}},
		{"ID not UTF-8", "a\xff", `{}`, etcd.Member{}, []error{kolco.ErrBadNodeID}},
		{"huge value", "a", `{"zone": "` + strings.Repeat("z", 5000) + `"}`, etcd.Member{}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := etcd.ParseValue(c.id, []byte(c.value))
			wantErr := c.want.ID == ""
			switch {
			case wantErr && !errors.Is(err, membership.ErrBadContent):
				t.Fatalf("got %+v, %v; want ErrBadContent", m, err)
			case !wantErr && (err != nil || m != c.want):
				t.Fatalf("got %+v, %v; want %+v", m, err, c.want)
			}
			for _, e := range c.errs {
				if !errors.Is(err, e) {
					t.Errorf("error %v does not wrap %v", err, e)
				}
			}
		})
	}
}

// FuzzParseValue checks that any key and value either give a valid
// member, which encodes to a value that reads back the same, or fail with
// ErrBadContent; never a panic.
func FuzzParseValue(f *testing.F) {
	f.Add("a", `{"weight": 2, "zone": "z", "addr": "h:1", "drained": true}`)
	f.Add("host:11211", ``)
	f.Add("a", `{"weight": 1e308}`)
	f.Add("a", `{"weight": 1e-320}`)
	f.Add("a", `{"weight": null, "zone": null}`)
	f.Add("a", "{\"zone\": \"\\u00a0\"}")
	f.Add("", `[]`)
	f.Fuzz(func(t *testing.T, id, value string) {
		m, err := etcd.ParseValue(id, []byte(value))
		if err != nil {
			if !errors.Is(err, membership.ErrBadContent) {
				t.Fatalf("error %v does not wrap ErrBadContent", err)
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("parsed an invalid node %+v: %v", m, err)
		}
		back, err := etcd.ParseValue(id, etcd.EncodeValue(m))
		if err != nil || back != m {
			t.Fatalf("%+v encodes to %s, which reads back as %+v, %v", m, etcd.EncodeValue(m), back, err)
		}
	})
}

// TestEditEmpty: an edit is empty only when neither its change of nodes
// nor any of the store's own parts has anything to write.
func TestEditEmpty(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  etcd.Edit
		empty bool
	}{
		{"zero", etcd.Edit{}, true},
		{"add", etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "a"}}}}, false},
		{"remove", etcd.Edit{Change: kolco.Change{Remove: []string{"a"}}}, false},
		{"drain", etcd.Edit{Drain: []string{"a"}}, false},
		{"undrain", etcd.Edit{Undrain: []string{"a"}}, false},
		{"state", etcd.Edit{State: []byte{}}, false},
		{"clear state", etcd.Edit{ClearState: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.edit.Empty(); got != c.empty {
				t.Errorf("Empty() = %v, want %v", got, c.empty)
			}
		})
	}
}
