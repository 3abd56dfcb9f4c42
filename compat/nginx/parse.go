package nginx

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// maxWeight bounds weight= (nginx itself has no practical limit) so that a
// configuration cannot ask for an unbounded number of ring points (160 per
// unit of weight).
const maxWeight = 1024

// Server is one `server` line of an upstream block.
type Server struct {
	// Addr is the address exactly as written: "127.0.0.1:19002",
	// "backend.example.com", "unix:/run/app.sock".
	Addr string
	// Weight is the weight= parameter; 0 means 1.
	Weight int
	// Down is the down parameter: the server keeps its place (and, for
	// consistent hashing, its points) but receives no keys.
	Down bool
}

func (s Server) weight() int {
	if s.Weight == 0 {
		return 1
	}
	return s.Weight
}

// Upstream is what [ParseUpstream] reads from an upstream block.
type Upstream struct {
	// Name is the upstream's name, empty when only server lines were given.
	Name string
	// Key is the `hash` directive's key expression, such as "$arg_k",
	// empty when there is no hash directive.
	Key string
	// Consistent reports whether the hash directive says "consistent".
	Consistent bool
	// Servers are the server lines in order.
	Servers []Server
}

// ParseUpstream reads an nginx `upstream name { ... }` block, or just its
// directives, split into words as nginx splits them (see [ParseConfig]);
// for a whole configuration, use ParseConfig. It keeps the `hash` directive and the `server` lines and skips
// other directives (keepalive, zone, ...). Server parameters max_fails=,
// fail_timeout=, max_conns=, slow_start=, route=, service= and resolve are
// accepted and ignored: they do not change placement; `down` sets
// [Server.Down]. The error wraps [kolco.ErrBadConfig] for a malformed line,
// an unknown parameter, `backup` (which nginx refuses with hash) or an
// unterminated quoted string, and [kolco.ErrBadWeight] for a bad weight=.
func ParseUpstream(text string) (Upstream, error) {
	toks, err := tokens(text)
	if err != nil {
		return Upstream{}, err
	}
	var u Upstream
	for n, f := range statements(toks) {
		stmt := strings.Join(f, " ")
		switch f[0] {
		case "upstream":
			if len(f) != 2 || n != 0 {
				return Upstream{}, fmt.Errorf("%w: nginx: bad upstream line %q", kolco.ErrBadConfig, stmt)
			}
			u.Name = f[1]
		case "hash":
			if len(f) < 2 || len(f) > 3 || (len(f) == 3 && f[2] != "consistent") {
				return Upstream{}, fmt.Errorf("%w: nginx: bad hash directive %q", kolco.ErrBadConfig, stmt)
			}
			u.Key, u.Consistent = f[1], len(f) == 3
		case "server":
			s, err := parseServer(f[1:])
			if err != nil {
				return Upstream{}, fmt.Errorf("nginx: %q: %w", stmt, err)
			}
			u.Servers = append(u.Servers, s)
		}
	}
	if len(u.Servers) == 0 {
		return Upstream{}, fmt.Errorf("%w: nginx: no server lines", kolco.ErrNoNodes)
	}
	return u, nil
}

// statements groups the words of toks into directives, each ended by ";",
// "{" or "}"; empty directives are dropped.
func statements(toks []token) [][]string {
	var out [][]string
	var cur []string
	for _, tk := range toks {
		if tk.kind == 'w' {
			cur = append(cur, tk.text)
			continue
		}
		if len(cur) > 0 {
			out = append(out, cur)
		}
		cur = nil
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func parseServer(f []string) (Server, error) {
	if len(f) == 0 || f[0] == "" {
		// nginx: `no host in upstream ""` for an empty quoted address.
		return Server{}, fmt.Errorf("%w: missing address", kolco.ErrBadConfig)
	}
	s := Server{Addr: f[0], Weight: 1}
	for _, p := range f[1:] {
		name, val, _ := strings.Cut(p, "=")
		switch name {
		case "weight":
			w, err := strconv.Atoi(val)
			if err != nil || w < 1 || w > maxWeight {
				return Server{}, fmt.Errorf("%w: weight=%q (1..%d)", kolco.ErrBadWeight, val, maxWeight)
			}
			s.Weight = w
		case "max_fails", "fail_timeout", "max_conns", "slow_start", "route", "service", "resolve":
		case "down":
			s.Down = true
		case "backup":
			return Server{}, fmt.Errorf("%w: nginx does not allow backup servers with hash", kolco.ErrBadConfig)
		default:
			return Server{}, fmt.Errorf("%w: unknown server parameter %q", kolco.ErrBadConfig, p)
		}
	}
	return s, nil
}

// nodeList validates servers and returns them as a node list in which
// the servers that are not down are placed.
func nodeList(servers []Server) (nodeset.List, error) {
	nodes := make([]kolco.Node, len(servers))
	up := make([]bool, len(servers))
	for i, s := range servers {
		if s.Weight < 0 || s.Weight > maxWeight {
			return nodeset.List{}, fmt.Errorf("nginx: server %q: %w (got %d)", s.Addr, kolco.ErrBadWeight, s.Weight)
		}
		nodes[i] = kolco.Node{ID: s.Addr, Addr: s.Addr, Weight: float64(s.weight())}
		up[i] = !s.Down
	}
	list, err := nodeset.NewList(nodes, up)
	if err != nil {
		return list, fmt.Errorf("nginx: %w", err)
	}
	return list, nil
}

// splitHostPort splits an address as nginx's consistent hash does.
func splitHostPort(addr string) (host, port string) {
	if len(addr) >= 5 && strings.EqualFold(addr[:5], "unix:") {
		return addr[5:], ""
	}
	for j := len(addr) - 1; j >= 0; j-- {
		c := addr[j]
		if c == ':' {
			return addr[:j], addr[j+1:]
		}
		if c < '0' || c > '9' {
			break
		}
	}
	return addr, ""
}
