package pymemcache

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// ErrBadServer is returned by [NodeName] for a server spec HashClient
// would reject.
var ErrBadServer = errors.New("pymemcache: bad server spec")

// Pool places keys on a fixed set of nodes as RendezvousHash.get_node does.
// It is immutable and safe for concurrent use; lookups do not allocate. It
// satisfies [kolco.Placement] with Node.ID and Node.Addr = the node name.
type Pool struct {
	names []string
	list  nodeset.List // the nodes, in the caller's order
}

// New returns the placement of a HashClient built on the given servers, each
// a spec as HashClient takes it (see [NodeName]). The error wraps
// [kolco.ErrNoNodes] for no servers, [ErrBadServer] for a spec HashClient
// rejects and [kolco.ErrDuplicateNode] for two specs naming the same node
// (RendezvousHash would keep one).
func New(servers []string) (*Pool, error) {
	if len(servers) == 0 {
		return nil, kolco.ErrNoNodes
	}
	p := &Pool{names: make([]string, len(servers))}
	nodes := make([]kolco.Node, len(servers))
	seen := make(map[string]struct{}, len(servers))
	for i, s := range servers {
		name, err := NodeName(s)
		if err != nil {
			return nil, err
		}
		if _, dup := seen[name]; dup {
			return nil, fmt.Errorf("%w: %q", kolco.ErrDuplicateNode, name)
		}
		seen[name] = struct{}{}
		p.names[i] = name
		nodes[i] = kolco.Node{ID: name, Addr: name}
	}
	var err error
	if p.list, err = nodeset.NewList(nodes, nil); err != nil {
		return nil, err
	}
	return p, nil
}

// NodeName returns the node name HashClient gives a server spec, following
// pymemcache's normalize_server_spec and _make_client_key: "unix:/path" and
// "/path" are the path; "host" is "host:11211"; "host:port" is
// "host:<int(port)>"; brackets around a host are removed ("[::1]:11211" is
// "::1:11211"). The error wraps [ErrBadServer] for an empty spec, "unix:"
// without a path, or a port Python's int() rejects.
func NodeName(spec string) (string, error) {
	switch {
	case spec == "":
		return "", fmt.Errorf("%w: empty", ErrBadServer)
	case spec == "unix:":
		// pymemcache takes it for a socket of no path, which no client
		// can connect to, and kolco names no node "".
		return "", fmt.Errorf("%w %q: no socket path", ErrBadServer, spec)
	case strings.HasPrefix(spec, "unix:"):
		return spec[5:], nil
	case strings.HasPrefix(spec, "/"):
		return spec, nil
	}
	host, port := spec, 11211
	if strings.Contains(spec, ":") && !strings.HasSuffix(spec, "]") {
		i := strings.LastIndexByte(spec, ':')
		var ok bool
		if port, ok = pyInt(spec[i+1:]); !ok {
			return "", fmt.Errorf("%w %q: port is not an integer", ErrBadServer, spec)
		}
		host = spec[:i]
	}
	if strings.HasPrefix(host, "[") {
		host = strings.Trim(host, "[]")
	}
	return host + ":" + strconv.Itoa(port), nil
}

// pyInt parses s as Python's int() does for ASCII input: optional
// surrounding whitespace, an optional sign, digits with single underscores
// between them.
func pyInt(s string) (int, bool) {
	s = strings.Trim(s, " \t\n\r\v\f")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
	if err != nil || n > 1<<31 {
		return 0, false
	}
	if neg {
		n = -n
	}
	return int(n), true
}

// Names returns the node names in the order given to [New].
func (p *Pool) Names() []string { return slices.Clone(p.names) }

// Index returns the index, into the servers given to [New], of the node
// RendezvousHash.get_node picks for a str key with the given UTF-8 text
// (-1 for the zero Pool).
func (p *Pool) Index(key []byte) int { return p.best(key, false) }

// IndexBytesKey is Index for a Python bytes key: the hash covers the key's
// repr, b'...'.
func (p *Pool) IndexBytesKey(key []byte) int { return p.best(key, true) }

func (p *Pool) best(key []byte, asBytes bool) int {
	win, high := -1, uint32(0)
	for i, name := range p.names {
		s := score(name, key, asBytes)
		if win < 0 || s > high || (s == high && name > p.names[win]) {
			win, high = i, s
		}
	}
	return win
}

// Score returns the score RendezvousHash gives node for a str key:
// murmur3_32("%s-%s" % (node, key)), over the low byte of each character.
func Score(node string, key []byte) uint32 { return score(node, key, false) }

func score(node string, key []byte, asBytes bool) uint32 {
	var m murmur
	m.writeString(node)
	m.write('-')
	if asBytes {
		m.writeRepr(key)
	} else {
		m.writeBytes(key)
	}
	return m.sum()
}

// writeString feeds the low byte of each code point of s; a byte that is
// not valid UTF-8 stands for itself.
func (m *murmur) writeString(s string) {
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			m.write(s[i])
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		m.unit(r, s[i], n)
		i += n
	}
}

// writeBytes is writeString for a byte slice.
func (m *murmur) writeBytes(b []byte) {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			m.write(b[i])
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		m.unit(r, b[i], n)
		i += n
	}
}

// unit feeds one character: the low byte of r, or the byte b itself when
// it is not valid UTF-8 (r == RuneError with width 1).
func (m *murmur) unit(r rune, b byte, n int) {
	if r == utf8.RuneError && n == 1 {
		m.write(b)
		return
	}
	m.write(byte(r))
}
