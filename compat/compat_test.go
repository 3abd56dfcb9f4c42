package compat_test

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat"
	"github.com/kolco-dev/kolco/compat/cassandra"
	"github.com/kolco-dev/kolco/compat/envoy"
	"github.com/kolco-dev/kolco/compat/goredisring"
	"github.com/kolco-dev/kolco/compat/grpcring"
	"github.com/kolco-dev/kolco/compat/haproxy"
	"github.com/kolco-dev/kolco/compat/libmemcached"
	"github.com/kolco-dev/kolco/compat/nginx"
	"github.com/kolco-dev/kolco/compat/pymemcache"
	"github.com/kolco-dev/kolco/compat/rediscluster"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

var testKeys = func() []string {
	keys := []string{"", "user:1", "{tag}a", "{tag}b", "ключ", "\xff\x00"}
	for i := range 500 {
		keys = append(keys, "key:"+strconv.Itoa(i*7919))
	}
	return keys
}()

// samePlacement fails unless got and want give every test key the same
// owners in the same order.
func samePlacement(t *testing.T, got, want kolco.Placement) {
	t.Helper()
	for _, k := range testKeys {
		g, err1 := got.LocateN(nil, k, 3)
		w, err2 := want.LocateN(nil, k, 3)
		if err1 != nil || err2 != nil || fmt.Sprint(g) != fmt.Sprint(w) {
			t.Fatalf("LocateN(%q) = %v, %v; want %v, %v", k, g, err1, w, err2)
		}
	}
}

// must returns v, or panics on a setup error: it wraps the constructors
// a test compares Build with, whose inputs are the test's own.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

const clusterNodes = `07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master - 0 1426238318243 3 connected 10923-16383
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 connected 0-5460
`

const nodetoolRing = `Datacenter: dc1
==========
Address    Rack   Status State   Load   Owns   Token
                                                 3074457345618258602
10.0.0.1   rack1  Up     Normal  1 KiB  33%    -9223372036854775808
10.0.0.2   rack1  Up     Normal  1 KiB  33%    -3074457345618258603
10.0.0.3   rack1  Up     Normal  1 KiB  33%    3074457345618258602
`

// TestBuildMatchesPackages checks that each system built by name from its
// own description places keys as the system's package does from the same
// description read by hand.
func TestBuildMatchesPackages(t *testing.T) {
	for _, c := range []struct {
		name string
		in   compat.Input
		want func(t *testing.T) kolco.Placement
	}{
		{"twemproxy", compat.Input{Servers: "10.0.0.1:11211:1 alpha, 10.0.0.2:11212:2", Hash: "murmur", HashTag: "{}"}, func(t *testing.T) kolco.Placement {
			a, b := must(twemproxy.ParseServer("10.0.0.1:11211:1 alpha")), must(twemproxy.ParseServer("10.0.0.2:11212:2"))
			return must(twemproxy.New(twemproxy.Config{Hash: "murmur", HashTag: "{}"}, []twemproxy.Server{a, b}))
		}},
		{"libmemcached", compat.Input{Servers: "10.0.0.1:11211:2,,10.0.0.2", Distribution: "ketama_weighted"}, func(t *testing.T) kolco.Placement {
			servers := must(libmemcached.ParseServers("10.0.0.1:11211:2,,10.0.0.2"))
			return must(libmemcached.New(libmemcached.Config{Distribution: "ketama_weighted"}, servers))
		}},
		{"nginx", compat.Input{Config: []byte("upstream u {\n hash $arg_k consistent;\n server 127.0.0.1:1 weight=2;\n server 127.0.0.1:2;\n}\n")}, func(t *testing.T) kolco.Placement {
			return must(nginx.NewConsistent([]nginx.Server{{Addr: "127.0.0.1:1", Weight: 2}, {Addr: "127.0.0.1:2"}}))
		}},
		{"haproxy", compat.Input{Config: []byte("backend b\n hash-type consistent\n server a 10.0.0.1:80\n server b 10.0.0.2:80 weight 3\n")}, func(t *testing.T) kolco.Placement {
			return must(haproxy.New([]haproxy.Server{{Name: "a", Addr: "10.0.0.1:80", Weight: 1}, {Name: "b", Addr: "10.0.0.2:80", Weight: 3}}, haproxy.HashType{Type: haproxy.Consistent, Avalanche: true}))
		}},
		{"redis", compat.Input{Config: []byte(clusterNodes)}, func(t *testing.T) kolco.Placement {
			return must(rediscluster.New(must(rediscluster.ParseClusterNodes(clusterNodes))))
		}},
		{"goredis", compat.Input{Servers: "s1=10.0.0.1:6379, s2=10.0.0.2:6379"}, func(t *testing.T) kolco.Placement {
			return must(goredisring.New(map[string]string{"s1": "10.0.0.1:6379", "s2": "10.0.0.2:6379"}))
		}},
		{"pymemcache", compat.Input{Servers: "10.0.0.1:11211,10.0.0.2"}, func(t *testing.T) kolco.Placement {
			return must(pymemcache.New([]string{"10.0.0.1:11211", "10.0.0.2"}))
		}},
		{"cassandra", compat.Input{Config: []byte(nodetoolRing)}, func(t *testing.T) kolco.Placement {
			return must(cassandra.New(must(cassandra.ParseNodetoolRing(nodetoolRing))))
		}},
		{"envoy", compat.Input{Servers: "10.0.0.1:80=2,10.0.0.2:80", Distribution: "maglev"}, func(t *testing.T) kolco.Placement {
			return must(envoy.NewMaglev([]envoy.Host{{Key: "10.0.0.1:80", Addr: "10.0.0.1:80", Weight: 2}, {Key: "10.0.0.2:80", Addr: "10.0.0.2:80", Weight: 1}}, envoy.MaglevConfig{}))
		}},
		{"grpc", compat.Input{Servers: "10.0.0.1:80=2,10.0.0.2:80"}, func(t *testing.T) kolco.Placement {
			return must(grpcring.New([]grpcring.Endpoint{{Addr: "10.0.0.1:80", Weight: 2}, {Addr: "10.0.0.2:80"}}, grpcring.Config{}))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := compat.Build(c.name, c.in)
			if err != nil {
				t.Fatal(err)
			}
			samePlacement(t, got, c.want(t))
			if s, _ := compat.Lookup(c.name); s.DataByAddr {
				for _, n := range got.Nodes() {
					if n.Addr == "" {
						t.Errorf("node %q has no address, though DataByAddr finds its keys by it", n.ID)
					}
				}
			}
		})
	}
}

// nutcrackerYML has pools of every shape nutcracker places, kolco proxy's
// own keys, and a pool of one of kolco's distributions.
const nutcrackerYML = `
kolco:
  metrics_listen: 127.0.0.1:9100
alpha:
  listen: 127.0.0.1:22121
  hash: fnv1a_64
  hash_tag: "{}"
  distribution: ketama
  auto_eject_hosts: true
  timeout: 400
  servers:
   - 127.0.0.1:11211:1 first
   - 127.0.0.1:11212:2
   - /var/run/memcached/a.sock:3
   - /var/run/memcached/b.sock:1 named
beta:
  listen: /var/run/beta.sock 0666
  distribution: modula
  hash: md5
  ejection: fail-fast
  servers:
   - 10.0.0.1:11211:1
   - 10.0.0.2:11211:3
   - 10.0.0.3:011212:1
gamma:
  servers:
   - 10.0.1.1:11211:1
   - 10.0.1.2:11211:1
delta:
  listen: 127.0.0.1:22124
  distribution: ring
  key_hash: xxh3
  servers:
   - 10.0.2.1:11211:1
`

// TestNutcrackerEveryPool checks each twemproxy pool of a whole
// nutcracker.yml against its servers and settings given by hand.
func TestNutcrackerEveryPool(t *testing.T) {
	names, err := compat.Blocks("twemproxy", []byte(nutcrackerYML))
	if err != nil || fmt.Sprint(names) != "[alpha beta delta gamma]" {
		t.Fatalf("Blocks = %v, %v; want the four pools, sorted, without the kolco key", names, err)
	}
	for _, w := range []struct {
		pool  string
		cfg   twemproxy.Config
		lines []string
	}{
		{"alpha", twemproxy.Config{Hash: "fnv1a_64", HashTag: "{}", Distribution: "ketama"},
			[]string{"127.0.0.1:11211:1 first", "127.0.0.1:11212:2", "/var/run/memcached/a.sock:3", "/var/run/memcached/b.sock:1 named"}},
		{"beta", twemproxy.Config{Hash: "md5", Distribution: "modula"}, []string{"10.0.0.1:11211:1", "10.0.0.2:11211:3", "10.0.0.3:011212:1"}},
		{"gamma", twemproxy.Config{}, []string{"10.0.1.1:11211:1", "10.0.1.2:11211:1"}},
	} {
		t.Run(w.pool, func(t *testing.T) {
			var servers []twemproxy.Server
			for _, l := range w.lines {
				servers = append(servers, must(twemproxy.ParseServer(l)))
			}
			got := must(compat.Build("twemproxy", compat.Input{Config: []byte(nutcrackerYML), Select: w.pool}))
			samePlacement(t, got, must(twemproxy.New(w.cfg, servers)))
		})
	}
	t.Run("delta", func(t *testing.T) {
		_, err := compat.Build("twemproxy", compat.Input{Config: []byte(nutcrackerYML), Select: "delta"})
		if !errors.Is(err, kolco.ErrBadConfig) {
			t.Errorf("a pool of kolco's ring: err = %v, want ErrBadConfig (not twemproxy's placement)", err)
		}
	})
}
