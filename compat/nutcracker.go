package compat

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// KolcoKey is the top-level key of a nutcracker.yml under which kolco
// proxy keeps its proxy-wide settings. Every other top-level key names a
// pool, as nutcracker reads the file; nutcracker itself would read this
// one as a pool too.
const KolcoKey = "kolco"

// NutcrackerFile is a nutcracker.yml, as [ReadNutcracker] reads it: the
// one reader of the format in this module, for kolco locate and plan, the
// membership file source and kolco proxy.
type NutcrackerFile struct {
	// Pools are the file's pools, in the order the file lists them.
	Pools []NutcrackerPool
	// Kolco is the mapping under KolcoKey, or nil when there is none.
	Kolco *yaml.Node
}

// NutcrackerPool is one pool of a nutcracker.yml: what places its keys, as
// twemproxy reads it, its servers, parsed, and the pool's whole mapping,
// for a reader of the keys placement does not read (nutcracker's others,
// kolco proxy's, a membership file's zones).
type NutcrackerPool struct {
	Name         string
	Hash         string
	HashTag      string
	Distribution string
	Servers      []twemproxy.Server
	// Node is the pool's mapping as the file writes it.
	Node *yaml.Node
}

// NutcrackerError is what is wrong with a nutcracker.yml: where (the pool,
// the key within it, the line) and what. It wraps kolco.ErrBadConfig and
// Err.
type NutcrackerError struct {
	// Pool is the pool at fault, empty for the file as a whole.
	Pool string
	// Key is the pool's key at fault, such as "servers", or empty.
	Key string
	// Line is the file's line at fault, from 1; 0 when unknown.
	Line int
	// Err says what is wrong.
	Err error
	// Path is the file's path, when the reader of the file knows it;
	// the message says "nutcracker.yml" without it.
	Path string
}

func (e *NutcrackerError) Error() string {
	s := "nutcracker.yml: "
	if e.Path != "" {
		s = e.Path + ": "
	}
	if e.Line > 0 {
		s += fmt.Sprintf("line %d: ", e.Line)
	}
	if e.Pool != "" {
		s += fmt.Sprintf("pool %q: ", e.Pool)
	}
	if e.Key != "" {
		s += e.Key + ": "
	}
	return s + e.Err.Error()
}

// Unwrap returns kolco.ErrBadConfig and Err.
func (e *NutcrackerError) Unwrap() []error { return []error{kolco.ErrBadConfig, e.Err} }

// placementKeys are the keys of a pool that place its keys.
type placementKeys struct {
	Hash         string   `yaml:"hash"`
	HashTag      string   `yaml:"hash_tag"`
	Distribution string   `yaml:"distribution"`
	Servers      []string `yaml:"servers"`
}

// ReadNutcracker reads a nutcracker.yml as nutcracker reads it: a mapping
// of pools by name, each a mapping; of each pool the keys that place its
// keys, and its servers, each "host:port:weight [name]" line parsed
// (twemproxy.ParseServer). Keys it does not know are left in each pool's
// Node. The error is a [*NutcrackerError]: YAML that is not of that shape,
// a server line that does not parse.
func ReadNutcracker(data []byte) (file *NutcrackerFile, err error) {
	defer func() {
		// The YAML decoder is not ours; never let a panic in it reach
		// the caller.
		if r := recover(); r != nil {
			file, err = nil, &NutcrackerError{Err: fmt.Errorf("yaml: %v", r)}
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		if line := TabIndentLine(data); line > 0 {
			// The YAML library names the line before the tab.
			return nil, &NutcrackerError{Line: line, Err: errTabIndent}
		}
		return nil, &NutcrackerError{Err: err}
	}
	file = &NutcrackerFile{}
	if len(doc.Content) == 0 {
		return file, nil // an empty file
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, &NutcrackerError{Line: top.Line, Err: errors.New("not a mapping of pools by name")}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		name, node := top.Content[i].Value, top.Content[i+1]
		if seen[name] {
			return nil, &NutcrackerError{Pool: name, Line: top.Content[i].Line, Err: errors.New("given twice")}
		}
		seen[name] = true
		if node.Kind == yaml.AliasNode && node.Alias != nil {
			node = node.Alias
		}
		if name == KolcoKey {
			file.Kolco = node
			continue
		}
		p, err := readPool(name, node)
		if err != nil {
			return nil, err
		}
		file.Pools = append(file.Pools, p)
	}
	return file, nil
}

// readPool reads one pool's placement and servers.
func readPool(name string, node *yaml.Node) (NutcrackerPool, error) {
	p := NutcrackerPool{Name: name, Node: node}
	if node.Kind != yaml.MappingNode {
		return p, &NutcrackerError{Pool: name, Line: node.Line, Err: errors.New("not a mapping of settings")}
	}
	var k placementKeys
	if err := node.Decode(&k); err != nil {
		return p, &NutcrackerError{Pool: name, Line: node.Line, Err: err}
	}
	p.Hash, p.HashTag, p.Distribution = k.Hash, k.HashTag, k.Distribution
	lines := valueOf(node, "servers")
	for i, l := range k.Servers {
		s, err := twemproxy.ParseServer(l)
		if err != nil {
			line := 0
			if lines != nil && i < len(lines.Content) {
				line = lines.Content[i].Line
			}
			return p, &NutcrackerError{Pool: name, Key: "servers", Line: line, Err: fmt.Errorf("%d: %w", i+1, err)}
		}
		p.Servers = append(p.Servers, s)
	}
	return p, nil
}

// valueOf returns the value of key in the mapping node, or nil.
func valueOf(node *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == key {
			return node.Content[i+1]
		}
	}
	return nil
}

// Names returns the names of the file's pools, sorted.
func (f *NutcrackerFile) Names() []string {
	names := make([]string, len(f.Pools))
	for i, p := range f.Pools {
		names[i] = p.Name
	}
	slices.Sort(names)
	return names
}

// Pool returns the pool named name, or the file's only pool when name is
// empty. The error, a [*NutcrackerError], names the pools there are.
func (f *NutcrackerFile) Pool(name string) (*NutcrackerPool, error) {
	if name == "" && len(f.Pools) == 1 {
		return &f.Pools[0], nil
	}
	for i := range f.Pools {
		if f.Pools[i].Name == name {
			return &f.Pools[i], nil
		}
	}
	if name == "" {
		return nil, &NutcrackerError{Err: fmt.Errorf("%d pools (%s): name the one to read", len(f.Pools), poolList(f.Names()))}
	}
	return nil, &NutcrackerError{Err: fmt.Errorf("no pool %q (pools: %s)", name, poolList(f.Names()))}
}

func poolList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// errTabIndent is what is wrong with a line indented with a tab.
var errTabIndent = errors.New("indented with a tab: YAML indents with spaces only")

// TabIndentLine returns the first line, from 1, whose indentation holds a
// tab, which YAML forbids; 0 for none. The YAML library's error for it
// names the line before, so readers of YAML files name this one instead.
func TabIndentLine(data []byte) int {
	for i, line := range bytes.Split(data, []byte("\n")) {
		indent := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
		if bytes.IndexByte(indent, '\t') >= 0 && len(bytes.TrimSpace(line)) > 0 {
			return i + 1
		}
	}
	return 0
}
