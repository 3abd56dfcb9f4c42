package compat

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kolco-dev/kolco"
)

// Sentinel errors. Build also returns the systems' own errors
// (kolco.ErrBadConfig, kolco.ErrDuplicateNode, ...), wrapped with context.
var (
	// ErrUnknown is returned by [Build] and [Blocks] for a name they do not
	// know.
	ErrUnknown = errors.New("compat: unknown system")
	// ErrInput is wrapped by every [InputError]: an input missing, given
	// where the system does not take it, or given with one it excludes.
	ErrInput = errors.New("compat: bad input")
	// ErrSelect is wrapped by every [SelectError]: a configuration of
	// several pools, upstreams or backends without a choice among them, or
	// a choice it does not have.
	ErrSelect = errors.New("compat: no block selected")
)

// Field names one field of [Input]; a Field value may hold several, as a
// set of bits.
type Field uint8

// The fields of Input.
const (
	Config Field = 1 << iota
	Select
	Servers
	Distribution
	Hash
	HashTag
)

var fieldNames = []string{"config", "select", "servers", "distribution", "hash", "hash tag"}

// Each returns the fields of the set, in the order of their declaration.
func (f Field) Each() []Field {
	var out []Field
	for i := range fieldNames {
		if f&(1<<i) != 0 {
			out = append(out, 1<<i)
		}
	}
	return out
}

// String returns the field's name, or the names of a set joined by "and".
func (f Field) String() string {
	var names []string
	for _, one := range f.Each() {
		names = append(names, fieldNames[oneIndex(one)])
	}
	return strings.Join(names, " and ")
}

func oneIndex(f Field) int {
	for i := range fieldNames {
		if f == 1<<i {
			return i
		}
	}
	return -1
}

// Input describes a system's servers in that system's own terms. Each
// system reads some of the fields ([Info.Takes]); [Build] refuses the
// others when they are set. Zero values mean "not given".
type Input struct {
	// Config is the system's own configuration or its tool's output:
	// nutcracker.yml, an nginx configuration, a haproxy.cfg, the output of
	// CLUSTER NODES or of nodetool ring. nil means none; a whole file with
	// several pools, upstreams or backends is read with Select.
	Config []byte
	// ConfigName names Config in error messages, such as its file name.
	ConfigName string
	// Select names the pool, upstream or backend of Config to use
	// ([Info.Block]); empty picks the only one.
	Select string
	// Servers is a server list in the system's own syntax
	// ([Info.ServersHint]): memcached_servers_parse's for libmemcached,
	// otherwise comma-separated entries.
	Servers string
	// Distribution is the system's distribution setting, in its own names.
	Distribution string
	// Hash is the system's key hash, in its own names.
	Hash string
	// HashTag is twemproxy's hash_tag, two characters such as "{}".
	HashTag string
}

// given returns the set of fields in holds.
func (in Input) given() Field {
	var f Field
	for _, x := range []struct {
		field Field
		set   bool
	}{
		{Config, in.Config != nil}, {Select, in.Select != ""}, {Servers, in.Servers != ""},
		{Distribution, in.Distribution != ""}, {Hash, in.Hash != ""}, {HashTag, in.HashTag != ""},
	} {
		if x.set {
			f |= x.field
		}
	}
	return f
}

// wrapConfig adds the configuration's name to an error about its content.
func (in Input) wrapConfig(err error) error {
	if err == nil || in.ConfigName == "" {
		return err
	}
	return fmt.Errorf("%s: %w", in.ConfigName, err)
}

// Problem says what is wrong with the fields of an [InputError].
type Problem uint8

// The problems with an Input.
const (
	// Missing: the system needs one of the fields.
	Missing Problem = iota
	// NotTaken: the system does not read the fields.
	NotTaken
	// Conflict: the fields exclude each other.
	Conflict
)

// InputError reports fields of an [Input] that are missing, do not apply,
// or exclude each other. It wraps [ErrInput].
type InputError struct {
	// System is the system's name.
	System string
	// Problem is what is wrong.
	Problem Problem
	// Fields are the fields at fault: for Missing, those of which one is
	// needed.
	Fields Field
	// Reason, when not empty, says what a missing field is needed for, or
	// why fields exclude each other, without naming fields.
	Reason string
	hints  map[Field]string
}

// Error describes the problem with the fields' own names.
func (e *InputError) Error() string {
	return "compat: " + e.Describe(Field.String, e.System)
}

// Unwrap returns [ErrInput].
func (e *InputError) Unwrap() error { return ErrInput }

// Describe describes the problem naming each field with name and the system
// with system, so that a command can speak of its flags: "--algo nginx
// needs --config FILE".
func (e *InputError) Describe(name func(Field) string, system string) string {
	var parts []string
	for _, f := range e.Fields.Each() {
		part := name(f)
		if h := e.hints[f]; e.Problem == Missing && h != "" {
			part += " " + h
		}
		parts = append(parts, part)
	}
	switch {
	case e.Problem == Missing && e.Reason != "":
		return system + " needs " + strings.Join(parts, " or ") + " " + e.Reason
	case e.Problem == Missing:
		return system + " needs " + strings.Join(parts, " or ")
	case e.Problem == NotTaken:
		return strings.Join(parts, " and ") + " does not apply to " + system
	case e.Reason != "":
		return strings.Join(parts, " and ") + " exclude each other: " + e.Reason
	}
	return strings.Join(parts, " and ") + " exclude each other"
}

// SelectError reports a configuration of several pools, upstreams or
// backends without a choice among them, or a choice it does not have. It
// wraps [ErrSelect].
type SelectError struct {
	// Kind is what is chosen: "pool", "upstream" or "backend".
	Kind string
	// Name is the name asked for; empty when none was.
	Name string
	// Names are the names the configuration has, in its order.
	Names []string
}

// Error names the choices.
func (e *SelectError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("compat: the configuration has %d %ss (%s): choose one", len(e.Names), e.Kind, strings.Join(e.Names, ", "))
	}
	if len(e.Names) == 0 {
		return fmt.Sprintf("compat: no %s %q: the configuration names none", e.Kind, e.Name)
	}
	return fmt.Sprintf("compat: no %s %q in the configuration (%ss: %s)", e.Kind, e.Name, e.Kind, strings.Join(e.Names, ", "))
}

// Unwrap returns [ErrSelect].
func (e *SelectError) Unwrap() error { return ErrSelect }

// pick returns the position of the block named sel among names, or of the
// only block when sel is empty. A single unnamed block has names [""].
func pick(kind string, names []string, sel string) (int, error) {
	named := names
	if len(names) == 1 && names[0] == "" {
		named = nil
	}
	switch {
	case len(names) == 0:
		return 0, fmt.Errorf("%w: the configuration has no %s with servers", kolco.ErrNoNodes, kind)
	case sel == "" && len(names) == 1:
		return 0, nil
	case sel == "":
		return 0, &SelectError{Kind: kind, Names: named}
	}
	found := -1
	for i, n := range names {
		if n == sel {
			if found >= 0 {
				return 0, fmt.Errorf("%w: %s %q is defined twice", kolco.ErrBadConfig, kind, sel)
			}
			found = i
		}
	}
	if found < 0 {
		return 0, &SelectError{Kind: kind, Name: sel, Names: named}
	}
	return found, nil
}
