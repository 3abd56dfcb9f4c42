package compat

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kolco-dev/kolco"
)

// Info describes one system.
type Info struct {
	// Name is what Build takes.
	Name string
	// Summary is one line for help texts.
	Summary string
	// Takes is the set of Input fields the system reads.
	Takes Field
	// Block is what Input.Select chooses in the system's configuration:
	// "pool", "upstream" or "backend"; empty when there is nothing to
	// choose.
	Block string
	// ConfigHint says what Input.Config holds, such as "nutcracker.yml".
	ConfigHint string
	// ServersHint gives the syntax of Input.Servers, such as
	// "host:port[:weight],...".
	ServersHint string
	// DataByAddr reports that a server's keys are found by its address
	// (kolco.Node.Addr): a server renamed in the configuration keeps its
	// keys, and a name pointed at a new address starts empty - memcached
	// behind twemproxy, nginx or HAProxy, the clients' server lists. False
	// where a node keeps its identity and its data across addresses
	// (Redis Cluster node IDs, Cassandra host IDs).
	DataByAddr bool

	needs    Field       // one of these must be given
	excludes []exclusion // fields that may not be given together
	build    func(Input) (kolco.Placement, error)
	blocks   func(config []byte) ([]string, error) // for systems with a Block
}

// exclusion refuses fields given with another.
type exclusion struct {
	with   Field  // given this field,
	fields Field  // these are refused,
	reason string // because
}

// check returns the InputError for fields of in that are missing, not
// taken, or given with one that excludes them.
func (s Info) check(in Input) error {
	given := in.given()
	if extra := given &^ s.Takes; extra != 0 {
		return &InputError{System: s.Name, Problem: NotTaken, Fields: extra}
	}
	if given&Select != 0 && given&Config == 0 {
		return s.missing(Config, "to choose a "+s.Block+" from")
	}
	for _, x := range s.excludes {
		if given&x.with != 0 && given&x.fields != 0 {
			return &InputError{System: s.Name, Problem: Conflict, Fields: x.with | given&x.fields, Reason: x.reason}
		}
	}
	if given&s.needs == 0 {
		return s.missing(s.needs, "")
	}
	return nil
}

// missing returns the error for an Input that has none of fields.
func (s Info) missing(fields Field, reason string) *InputError {
	return &InputError{System: s.Name, Problem: Missing, Fields: fields, Reason: reason,
		hints: map[Field]string{Config: s.ConfigHint, Servers: s.ServersHint}}
}

var all = []Info{
	{Name: "twemproxy", DataByAddr: true, Summary: "twemproxy (nutcracker) 0.5.0: a pool's ketama or modula distribution",
		Takes: Config | Select | Servers | Distribution | Hash | HashTag, Block: poolBlock,
		ConfigHint: "nutcracker.yml", ServersHint: "'host:port:weight [name]',...", needs: Config | Servers,
		excludes: []exclusion{{Config, Servers, ""}, {Config, Hash | HashTag | Distribution, "the pool's own hash, hash_tag and distribution apply"}},
		build:    buildTwemproxy, blocks: nutcrackerPools},
	{Name: "libmemcached", DataByAddr: true, Summary: "libmemcached 1.1.4 clients: modula or ketama over a memcached_servers_parse list",
		Takes: Servers | Distribution | Hash, ServersHint: "host:port[:weight],...", needs: Servers, build: buildLibmemcached},
	{Name: "nginx", DataByAddr: true, Summary: "nginx 1.22 upstream hash, plain or consistent",
		Takes: Config | Select, Block: upstreamBlock, ConfigHint: "nginx.conf or an upstream block", needs: Config,
		build: buildNginx, blocks: nginxUpstreams},
	{Name: "haproxy", DataByAddr: true, Summary: "HAProxy 2.6 backend hash, map-based or consistent",
		Takes: Config | Select, Block: backendBlock, ConfigHint: "haproxy.cfg or a backend section", needs: Config,
		build: buildHAProxy, blocks: haproxyBackends},
	{Name: "redis", Summary: "Redis Cluster: the slot table of CLUSTER NODES",
		Takes: Config, ConfigHint: "CLUSTER NODES output", needs: Config, build: buildRedis},
	{Name: "goredis", DataByAddr: true, Summary: "go-redis v9 Ring: rendezvous over shard names",
		Takes: Servers, ServersHint: "name=host:port,...", needs: Servers, build: buildGoRedis},
	{Name: "pymemcache", DataByAddr: true, Summary: "pymemcache 3.5 HashClient: rendezvous over host:port",
		Takes: Servers, ServersHint: "host:port,...", needs: Servers, build: buildPymemcache},
	{Name: "cassandra", Summary: "Cassandra Murmur3Partitioner: the token ring of nodetool ring",
		Takes: Config, ConfigHint: "nodetool ring output", needs: Config, build: buildCassandra},
	{Name: "envoy", DataByAddr: true, Summary: "Envoy ring_hash or maglev over host keys",
		Takes: Servers | Distribution, ServersHint: "key[=weight],...", needs: Servers, build: buildEnvoy},
	{Name: "grpc", Summary: "grpc-go 1.83 ring_hash balancer over endpoint hash keys, default ring sizes",
		Takes: Servers, ServersHint: "key[=weight],...", needs: Servers, build: buildGRPC},
}

// All returns every system, sorted by name.
func All() []Info {
	out := slices.Clone(all)
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Names returns the names Build accepts, sorted.
func Names() []string {
	var names []string
	for _, s := range All() {
		names = append(names, s.Name)
	}
	return names
}

// Lookup returns the system with the given name.
func Lookup(name string) (Info, bool) {
	for _, s := range all {
		if s.Name == name {
			return s, true
		}
	}
	return Info{}, false
}

func lookup(name string) (Info, error) {
	s, ok := Lookup(name)
	if !ok {
		return Info{}, fmt.Errorf("%w %q (known: %s)", ErrUnknown, name, strings.Join(Names(), ", "))
	}
	return s, nil
}

// Check returns the error [Build] would return for the fields of in -
// missing, not taken, or given with one that excludes them - without
// reading what they hold, so that a caller can check its arguments before
// it loads a file: Config only needs to be non-nil. The error wraps
// [ErrUnknown] or is an [InputError].
func Check(name string, in Input) error {
	s, err := lookup(name)
	if err != nil {
		return err
	}
	return s.check(in)
}

// Build returns the placement of system name for the servers in describes.
// The error wraps [ErrUnknown] for an unknown name; is an [InputError]
// ([ErrInput]) for an input missing, given where the system does not take
// it, or given with one it excludes (see [Check]); is a [SelectError]
// ([ErrSelect]) when Input.Select is needed or names nothing in the
// configuration; and otherwise wraps the system's own errors for what its
// description holds (kolco.ErrBadConfig, kolco.ErrNoNodes,
// kolco.ErrDuplicateNode, ...).
func Build(name string, in Input) (kolco.Placement, error) {
	s, err := lookup(name)
	if err != nil {
		return nil, err
	}
	if err := s.check(in); err != nil {
		return nil, err
	}
	// The builders return the packages' (*T, error) as is: a failed one
	// gives an interface holding a nil pointer, which must not reach a
	// caller who checks p == nil.
	p, err := s.build(in)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Blocks returns the names of the pools, upstreams or backends (see
// [Info.Block]) of a configuration of system name, in the order Select
// takes them: sorted for twemproxy, in the file's order otherwise. A
// configuration of one unnamed block (bare directives) gives [""]. The
// error wraps [ErrUnknown], an [InputError] for a system without blocks,
// or the system's errors for a configuration it cannot read.
func Blocks(name string, config []byte) ([]string, error) {
	s, err := lookup(name)
	if err != nil {
		return nil, err
	}
	if s.blocks == nil {
		return nil, &InputError{System: s.Name, Problem: NotTaken, Fields: Select}
	}
	return s.blocks(config)
}
