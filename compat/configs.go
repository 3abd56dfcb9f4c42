package compat

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/haproxy"
	"github.com/kolco-dev/kolco/compat/nginx"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// The systems described by a configuration of several pools, upstreams or
// backends, one of which Input.Select picks.

// What Input.Select chooses in each system's configuration.
const (
	poolBlock     = "pool"
	upstreamBlock = "upstream"
	backendBlock  = "backend"
)

// proxyGlobalKey is the top-level key of nutcracker.yml that holds kolco
// proxy's own settings rather than a pool.
const proxyGlobalKey = "kolco"

// nutcrackerPool is what placement reads of one pool of nutcracker.yml;
// the other keys, nutcracker's and kolco proxy's, are ignored.
type nutcrackerPool struct {
	Hash         string   `yaml:"hash"`
	HashTag      string   `yaml:"hash_tag"`
	Distribution string   `yaml:"distribution"`
	Servers      []string `yaml:"servers"`
}

// readNutcracker returns the pools of a nutcracker.yml by name. The error
// wraps kolco.ErrBadConfig for a file that is not YAML of that shape.
func readNutcracker(data []byte) (pools map[string]nutcrackerPool, err error) {
	defer func() {
		// The YAML decoder is not ours; never let a panic in it reach
		// the caller.
		if r := recover(); r != nil {
			pools, err = nil, fmt.Errorf("%w: nutcracker.yml: %v", kolco.ErrBadConfig, r)
		}
	}()
	var raw map[string]yaml.Node
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: nutcracker.yml: %w", kolco.ErrBadConfig, err)
	}
	delete(raw, proxyGlobalKey)
	pools = make(map[string]nutcrackerPool, len(raw))
	for name, node := range raw {
		var p nutcrackerPool
		if err := node.Decode(&p); err != nil {
			return nil, fmt.Errorf("%w: nutcracker.yml: pool %q: %w", kolco.ErrBadConfig, name, err)
		}
		pools[name] = p
	}
	return pools, nil
}

func nutcrackerPools(config []byte) ([]string, error) {
	pools, err := readNutcracker(config)
	return poolNames(pools), err
}

// poolNames returns the names of pools, sorted.
func poolNames(pools map[string]nutcrackerPool) []string {
	names := make([]string, 0, len(pools))
	for name := range pools {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func buildTwemproxy(in Input) (kolco.Placement, error) {
	var (
		cfg   = twemproxy.Config{Hash: in.Hash, HashTag: in.HashTag, Distribution: in.Distribution}
		lines []string
		where string // the pool, in errors about its servers
	)
	if in.Config != nil {
		pools, err := readNutcracker(in.Config)
		if err != nil {
			return nil, in.wrapConfig(err)
		}
		names := poolNames(pools)
		i, err := pick(poolBlock, names, in.Select)
		if err != nil {
			return nil, in.wrapConfig(err)
		}
		p := pools[names[i]]
		cfg = twemproxy.Config{Hash: p.Hash, HashTag: p.HashTag, Distribution: p.Distribution}
		lines, where = p.Servers, fmt.Sprintf("pool %q: ", names[i])
	} else {
		lines = splitList(in.Servers)
	}
	servers := make([]twemproxy.Server, 0, len(lines))
	for _, l := range lines {
		srv, err := twemproxy.ParseServer(l)
		if err != nil {
			return nil, in.wrapConfig(fmt.Errorf("%s%w", where, err))
		}
		servers = append(servers, srv)
	}
	p, err := twemproxy.New(cfg, servers)
	if err != nil {
		return nil, in.wrapConfig(fmt.Errorf("%s%w", where, err))
	}
	return p, nil
}

// names returns the names of blocks, in order.
func names[B any](blocks []B, name func(B) string) []string {
	out := make([]string, len(blocks))
	for i, b := range blocks {
		out[i] = name(b)
	}
	return out
}

// choose returns the block of blocks that in.Select names, or the only one.
func choose[B any](in Input, kind string, blocks []B, name func(B) string) (B, error) {
	i, err := pick(kind, names(blocks, name), in.Select)
	if err != nil {
		var none B
		return none, in.wrapConfig(err)
	}
	return blocks[i], nil
}

func upstreamName(b nginx.Block) string { return b.Name }

func nginxUpstreams(config []byte) ([]string, error) {
	blocks, err := nginx.ParseConfig(string(config))
	return names(blocks, upstreamName), err
}

func buildNginx(in Input) (kolco.Placement, error) {
	blocks, err := nginx.ParseConfig(string(in.Config))
	if err != nil {
		return nil, in.wrapConfig(err)
	}
	b, err := choose(in, upstreamBlock, blocks, upstreamName)
	if err != nil {
		return nil, err
	}
	u, err := b.Upstream()
	if err != nil {
		return nil, in.wrapConfig(err)
	}
	if u.Consistent {
		return nginx.NewConsistent(u.Servers)
	}
	return nginx.NewModulo(u.Servers)
}

func backendName(s haproxy.Section) string { return s.Name }

func haproxyBackends(config []byte) ([]string, error) {
	return names(haproxy.ParseConfig(string(config)), backendName), nil
}

func buildHAProxy(in Input) (kolco.Placement, error) {
	s, err := choose(in, backendBlock, haproxy.ParseConfig(string(in.Config)), backendName)
	if err != nil {
		return nil, err
	}
	b, err := s.Backend()
	if err != nil {
		return nil, in.wrapConfig(err)
	}
	return haproxy.New(b.Servers, b.Hash)
}
