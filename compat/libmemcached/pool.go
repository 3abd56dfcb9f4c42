package libmemcached

import (
	"cmp"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/hashkit"
	"github.com/kolco-dev/kolco/internal/continuum"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// Distribution names for [Config.Distribution].
const (
	Modula         = "modula"
	Ketama         = "ketama"
	KetamaWeighted = "ketama_weighted"
	KetamaSpy      = "ketama_spy"
)

// DefaultPort is memcached's port, the one whose servers are hashed by host
// alone.
const DefaultPort = 11211

// maxHost is the longest host libmemcached accepts (NI_MAXHOST - 1).
const maxHost = 1024

// Server is one memcached server as memcached_server_add_with_weight takes
// it.
type Server struct {
	// Host is hashed exactly as written; empty means "localhost".
	Host string
	// Port is 1..65535; 0 means 11211.
	Port int
	// Weight is the server's relative share; 0 means 1. A weight above 1
	// under a ketama distribution turns on weighted points.
	Weight int
	// Socket marks a unix-domain socket as memcached_servers_parse and
	// memcached_server_add_unix_socket_with_weight add it: Host is the path,
	// the port is 0, and the server hashes as "path:0-i". A path given
	// without Socket is what memcached_server_add_with_weight makes of it:
	// port 11211, hashed as "path-i".
	Socket bool
}

// Config holds the libmemcached behaviours that decide placement. The zero
// value is libmemcached's default: modula with one_at_a_time.
type Config struct {
	// Distribution is modula (the default when empty), ketama,
	// ketama_weighted or ketama_spy; libmemcached's constant names
	// (consistent, consistent_ketama, consistent_weighted,
	// consistent_ketama_spy, with or without MEMCACHED_DISTRIBUTION_) are
	// accepted too.
	Distribution string
	// Hash is the key hash (MEMCACHED_BEHAVIOR_HASH), a name from
	// [hashkit.Names]. Empty means one_at_a_time, or md5 for
	// ketama_weighted, which sets it. To model
	// memcached_behavior_set_distribution(MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED),
	// which does not change the hash, give Hash "default" explicitly.
	Hash string
	// SortHosts is MEMCACHED_BEHAVIOR_SORT_HOSTS.
	SortHosts bool
}

// Pool places keys on a fixed list of servers. It is immutable and safe for
// concurrent use; lookups do not allocate. It satisfies [kolco.Placement]
// with Node.ID and Node.Addr = "host:port" and Node.Weight = the weight.
type Pool struct {
	servers []Server
	list    nodeset.List // the servers as nodes, in the caller's order
	hash    hashkit.Func
	order   []int32 // libmemcached's server order: order[k] indexes servers
	modula  bool
	spy     bool
	weights bool // weighted md5 points

	ring continuum.Continuum[uint32] // ketama; owners index servers
}

// New returns the placement a libmemcached client with the given behaviours
// and servers uses. The error wraps [kolco.ErrNoNodes] for no servers,
// [kolco.ErrBadWeight] for a weight outside 0..2^32-1, [kolco.ErrBadNodeID]
// for a host longer than 1024 bytes or holding a NUL, [kolco.ErrBadConfig]
// for a port outside 0..65535, an unknown distribution or an unknown hash
// (then also [hashkit.ErrUnknown]), and [kolco.ErrDuplicateNode] for the same
// host and port twice (which libmemcached would accept).
func New(cfg Config, servers []Server) (*Pool, error) {
	p := &Pool{}
	if err := p.configure(cfg); err != nil {
		return nil, err
	}
	if len(servers) == 0 {
		return nil, kolco.ErrNoNodes
	}
	if err := p.setServers(servers); err != nil {
		return nil, err
	}
	p.order = hostOrder(p.servers, cfg.SortHosts)
	if !p.modula {
		p.buildContinuum()
	}
	return p, nil
}

func (p *Pool) configure(cfg Config) error {
	d := strings.TrimPrefix(strings.ToLower(cfg.Distribution), "memcached_distribution_")
	hash := cfg.Hash
	switch d {
	case "", Modula:
		p.modula = true
	case Ketama, "consistent", "consistent_ketama":
	case KetamaWeighted, "consistent_weighted":
		p.weights = true
		hash = cmp.Or(hash, "md5")
	case KetamaSpy, "consistent_ketama_spy":
		p.spy = true
	default:
		return fmt.Errorf("%w: unknown distribution %q (want modula, ketama, ketama_weighted or ketama_spy)", kolco.ErrBadConfig, cfg.Distribution)
	}
	f, err := hashkit.Parse(cmp.Or(hash, "default"))
	if err != nil {
		return fmt.Errorf("%w: %w", kolco.ErrBadConfig, err)
	}
	p.hash = f
	return nil
}

func (p *Pool) setServers(servers []Server) error {
	p.servers = slices.Clone(servers)
	nodes := make([]kolco.Node, len(servers))
	seen := make(map[string]struct{}, len(servers))
	for i := range p.servers {
		s := &p.servers[i]
		s.Host = cmp.Or(s.Host, "localhost")
		if s.Socket {
			s.Port = 0
		} else {
			s.Port = cmp.Or(s.Port, DefaultPort)
		}
		s.Weight = cmp.Or(s.Weight, 1)
		switch {
		case len(s.Host) > maxHost || strings.IndexByte(s.Host, 0) >= 0:
			return fmt.Errorf("server %d: %w (host longer than %d bytes or holding a NUL)", i, kolco.ErrBadNodeID, maxHost)
		case s.Port < 0 || s.Port > 65535:
			return fmt.Errorf("server %q: %w: port %d", s.Host, kolco.ErrBadConfig, s.Port)
		case s.Weight < 0 || s.Weight > math.MaxUint32:
			return fmt.Errorf("server %q: %w (got %d)", s.Host, kolco.ErrBadWeight, s.Weight)
		}
		if s.Weight > 1 && !p.modula {
			p.weights = true
		}
		addr := s.Addr()
		if _, dup := seen[addr]; dup {
			return fmt.Errorf("%w: %q", kolco.ErrDuplicateNode, addr)
		}
		seen[addr] = struct{}{}
		nodes[i] = kolco.Node{ID: addr, Addr: addr, Weight: float64(s.Weight)}
	}
	var err error
	p.list, err = nodeset.NewList(nodes, nil)
	return err
}

// Addr returns "host:port", with brackets around an IPv6 literal, or the
// path of a socket.
func (s Server) Addr() string {
	if s.Socket {
		return cmp.Or(s.Host, "localhost")
	}
	return net.JoinHostPort(cmp.Or(s.Host, "localhost"), strconv.Itoa(cmp.Or(s.Port, DefaultPort)))
}

// hostOrder returns libmemcached's server order: as given, or with sort
// sorted by host (strcmp, bytewise) then port.
func hostOrder(servers []Server, sort bool) []int32 {
	order := make([]int32, len(servers))
	for i := range order {
		order[i] = int32(i)
	}
	if sort {
		slices.SortStableFunc(order, func(a, b int32) int {
			return cmp.Or(strings.Compare(servers[a].Host, servers[b].Host), cmp.Compare(servers[a].Port, servers[b].Port))
		})
	}
	return order
}

// Servers returns a copy of the servers in the order given to [New], with
// the defaults filled in.
func (p *Pool) Servers() []Server { return slices.Clone(p.servers) }

// Hash returns the key hash libmemcached computes for key
// (memcached_generate_hash before the server lookup): 0 when there is one
// server.
func (p *Pool) Hash(key []byte) uint32 {
	if len(p.servers) <= 1 {
		return 0
	}
	return p.hash(key)
}

// Index returns the index, into the servers given to [New], of the server
// libmemcached sends key to (-1 for the zero Pool).
func (p *Pool) Index(key []byte) int {
	if len(p.servers) <= 1 {
		return len(p.servers) - 1
	}
	h := p.hash(key)
	if p.modula {
		return int(p.order[h%uint32(len(p.order))])
	}
	return p.ring.Locate(h)
}
