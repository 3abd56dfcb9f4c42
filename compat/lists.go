package compat

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/cassandra"
	"github.com/kolco-dev/kolco/compat/envoy"
	"github.com/kolco-dev/kolco/compat/goredisring"
	"github.com/kolco-dev/kolco/compat/grpcring"
	"github.com/kolco-dev/kolco/compat/libmemcached"
	"github.com/kolco-dev/kolco/compat/pymemcache"
	"github.com/kolco-dev/kolco/compat/rediscluster"
)

// The systems described by a server list or by one tool's output.

// splitList splits a comma-separated list, trimming spaces and dropping
// empty entries.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func buildLibmemcached(in Input) (kolco.Placement, error) {
	servers, err := libmemcached.ParseServers(in.Servers)
	if err != nil {
		return nil, err
	}
	return libmemcached.New(libmemcached.Config{Distribution: in.Distribution, Hash: in.Hash}, servers)
}

func buildPymemcache(in Input) (kolco.Placement, error) {
	return pymemcache.New(splitList(in.Servers))
}

// buildGoRedis reads shards as "name=host:port": go-redis takes them as
// the map RingOptions.Addrs.
func buildGoRedis(in Input) (kolco.Placement, error) {
	addrs := map[string]string{}
	for _, shard := range splitList(in.Servers) {
		name, addr, ok := strings.Cut(shard, "=")
		if !ok {
			return nil, fmt.Errorf("%w: goredis shard %q: want name=host:port", kolco.ErrBadConfig, shard)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("%w: goredis shard %q: %w", kolco.ErrBadConfig, shard, err)
		}
		if _, dup := addrs[name]; dup {
			return nil, fmt.Errorf("%w: goredis shard name %q", kolco.ErrDuplicateNode, name)
		}
		addrs[name] = addr
	}
	return goredisring.New(addrs)
}

// buildEnvoy reads hosts as "key" or "key=weight", key being what Envoy
// hashes for the host (its address unless hash_key or the hostname is
// used).
func buildEnvoy(in Input) (kolco.Placement, error) {
	var hosts []envoy.Host
	for _, host := range splitList(in.Servers) {
		key, w, hasWeight := strings.Cut(host, "=")
		h := envoy.Host{Key: key, Addr: key, Weight: 1}
		if hasWeight {
			n, err := strconv.ParseUint(w, 10, 32)
			if err != nil || n == 0 {
				return nil, fmt.Errorf("%w: envoy host %q: weight must be a positive integer", kolco.ErrBadWeight, host)
			}
			h.Weight = uint32(n)
		}
		hosts = append(hosts, h)
	}
	switch in.Distribution {
	case "", "ring_hash":
		return envoy.NewRing(hosts, envoy.RingConfig{})
	case "maglev":
		return envoy.NewMaglev(hosts, envoy.MaglevConfig{})
	}
	return nil, fmt.Errorf("%w: envoy distribution %q: want ring_hash or maglev", kolco.ErrBadConfig, in.Distribution)
}

// buildGRPC reads endpoints as "key" or "key=weight", key being the
// endpoint's hash key (its address unless one is set).
func buildGRPC(in Input) (kolco.Placement, error) {
	var endpoints []grpcring.Endpoint
	for _, e := range splitList(in.Servers) {
		key, w, hasWeight := strings.Cut(e, "=")
		ep := grpcring.Endpoint{Addr: key}
		if hasWeight {
			n, err := strconv.ParseUint(w, 10, 32)
			if err != nil || n == 0 {
				return nil, fmt.Errorf("%w: grpc endpoint %q: weight must be a positive integer", kolco.ErrBadWeight, e)
			}
			ep.Weight = uint32(n)
		}
		endpoints = append(endpoints, ep)
	}
	return grpcring.New(endpoints, grpcring.Config{})
}

func buildRedis(in Input) (kolco.Placement, error) {
	masters, err := rediscluster.ParseClusterNodes(string(in.Config))
	if err != nil {
		return nil, in.wrapConfig(err)
	}
	return rediscluster.New(masters)
}

func buildCassandra(in Input) (kolco.Placement, error) {
	endpoints, err := cassandra.ParseNodetoolRing(string(in.Config))
	if err != nil {
		return nil, in.wrapConfig(err)
	}
	return cassandra.New(endpoints)
}
