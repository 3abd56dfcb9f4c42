package compat

import (
	"fmt"

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

func nutcrackerPools(config []byte) ([]string, error) {
	f, err := ReadNutcracker(config)
	if err != nil {
		return nil, err
	}
	return f.Names(), nil
}

func buildTwemproxy(in Input) (kolco.Placement, error) {
	cfg := twemproxy.Config{Hash: in.Hash, HashTag: in.HashTag, Distribution: in.Distribution}
	var servers []twemproxy.Server
	where := "" // the pool, in errors about its servers
	if in.Config != nil {
		f, err := ReadNutcracker(in.Config)
		if err != nil {
			return nil, in.wrapConfig(err)
		}
		names := f.Names()
		i, err := pick(poolBlock, names, in.Select)
		if err != nil {
			return nil, in.wrapConfig(err)
		}
		p, _ := f.Pool(names[i]) // one of its names
		cfg = twemproxy.Config{Hash: p.Hash, HashTag: p.HashTag, Distribution: p.Distribution}
		servers, where = p.Servers, fmt.Sprintf("pool %q: ", p.Name)
	} else {
		for _, l := range splitList(in.Servers) {
			srv, err := twemproxy.ParseServer(l)
			if err != nil {
				return nil, in.wrapConfig(err)
			}
			servers = append(servers, srv)
		}
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
