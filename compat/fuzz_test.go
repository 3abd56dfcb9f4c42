package compat_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat"
	"github.com/kolco-dev/kolco/compat/libmemcached"
	"github.com/kolco-dev/kolco/compat/pymemcache"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// FuzzBuild checks that Build, given anything, returns a placement that
// answers or an error wrapping a sentinel, never a panic.
func FuzzBuild(f *testing.F) {
	names := compat.Names()
	idx := func(name string) uint8 { return uint8(slices.Index(names, name)) }
	f.Add(idx("twemproxy"), []byte(nutcrackerYML), "alpha", "", "", "", "")
	f.Add(idx("twemproxy"), []byte(nil), "", "a:1:1,b:2:2 x", "modula", "md5", "{}")
	f.Add(idx("libmemcached"), []byte(nil), "", "h1:11211:2, h2", "ketama", "", "")
	f.Add(idx("nginx"), []byte(nginxConf), "b", "", "", "", "")
	f.Add(idx("haproxy"), []byte(haproxyCfg), "web", "", "", "", "")
	f.Add(idx("redis"), []byte(clusterNodes), "", "", "", "", "")
	f.Add(idx("goredis"), []byte(nil), "", "a=h:1,b=h:2", "", "", "")
	f.Add(idx("pymemcache"), []byte(nil), "", "h:1,/sock", "", "", "")
	f.Add(idx("cassandra"), []byte(nodetoolRing), "", "", "", "", "")
	f.Add(idx("envoy"), []byte(nil), "", "a=3,b", "maglev", "", "")
	f.Add(idx("grpc"), []byte(nil), "", "10.0.0.1:80=3,b", "", "", "")
	// A distribution that is not a string.
	f.Add(idx("twemproxy"), []byte("a:\n  servers: [\"h:1:1\"]\n  distribution: {x: 1}"), "", "", "", "", "")
	f.Fuzz(func(t *testing.T, system uint8, config []byte, sel, servers, dist, hash, tag string) {
		name := names[int(system)%len(names)]
		p, err := compat.Build(name, compat.Input{Config: config, Select: sel, Servers: servers, Distribution: dist, Hash: hash, HashTag: tag})
		if err != nil {
			for _, known := range []error{compat.ErrInput, compat.ErrSelect, kolco.ErrBadConfig, kolco.ErrNoNodes,
				kolco.ErrDuplicateNode, kolco.ErrBadNodeID, kolco.ErrBadWeight, twemproxy.ErrBadServer,
				libmemcached.ErrBadServerList, pymemcache.ErrBadServer} {
				if errors.Is(err, known) {
					return
				}
			}
			t.Fatalf("%s: error %v wraps no known sentinel", name, err)
		}
		if _, err := p.LocateN(nil, "key", 2); err != nil {
			t.Fatalf("%s: LocateN: %v", name, err)
		}
	})
}
