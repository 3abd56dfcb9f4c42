package compat_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

const haproxyCfg = `
global
    maxconn 100
defaults
    hash-type consistent
backend web
    server w1 10.0.0.1:80
    server w2 10.0.0.2:80
backend api
    server w1 10.0.1.1:80
listen stats
    bind :8404
`

const nginxConf = `
http {
    upstream a { hash $arg_k consistent; server 127.0.0.1:1; }
    upstream b { hash $arg_k; server 127.0.0.1:2; server 127.0.0.1:3; }
}
`

// TestSelect checks the choice among a configuration's pools, upstreams or
// backends: needed when there are several, listed when missing or wrong.
func TestSelect(t *testing.T) {
	for _, c := range []struct {
		system string
		config string
		names  []string
	}{
		{"twemproxy", nutcrackerYML, []string{"alpha", "beta", "delta", "gamma"}},
		{"nginx", nginxConf, []string{"a", "b"}},
		{"haproxy", haproxyCfg, []string{"web", "api"}},
	} {
		t.Run(c.system, func(t *testing.T) {
			in := compat.Input{Config: []byte(c.config)}
			names, err := compat.Blocks(c.system, in.Config)
			if err != nil || !slices.Equal(names, c.names) {
				t.Fatalf("Blocks = %v, %v; want %v", names, err, c.names)
			}
			var se *compat.SelectError
			if _, err := compat.Build(c.system, in); !errors.As(err, &se) || se.Name != "" || !slices.Equal(se.Names, c.names) {
				t.Errorf("no choice: err = %v, want a SelectError listing %v", err, c.names)
			}
			in.Select = "nosuch"
			if _, err := compat.Build(c.system, in); !errors.As(err, &se) || se.Name != "nosuch" || !slices.Equal(se.Names, c.names) || !errors.Is(err, compat.ErrSelect) {
				t.Errorf("unknown choice: err = %v, want a SelectError naming it and listing %v", err, c.names)
			}
			in.Select = c.names[1]
			p, err := compat.Build(c.system, in)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Locate("k"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSelectOne checks that a configuration of one pool, upstream or backend
// needs no choice, and that the choice picks the right one where two
// backends share a server name (which one backend read as a whole would
// refuse as a duplicate).
func TestSelectOne(t *testing.T) {
	web := must(compat.Build("haproxy", compat.Input{Config: []byte(haproxyCfg), Select: "web"}))
	if got := web.Nodes(); len(got) != 2 || got[0].Addr != "10.0.0.1:80" {
		t.Errorf("backend web: nodes %v", got)
	}
	for _, c := range []struct{ name, system, config string }{
		{"one pool", "twemproxy", "only:\n  servers:\n   - 10.0.0.1:11211:1\n"},
		{"one upstream", "nginx", "upstream only { server 127.0.0.1:1; }"},
		{"bare directives", "nginx", "hash $arg_k;\nserver 127.0.0.1:1;\n"},
		{"one backend with servers", "haproxy", "global\n maxconn 1\nbackend only\n server s 10.0.0.1:80\nlisten stats\n bind :1\n"},
		{"bare lines", "haproxy", "server s 10.0.0.1:80\n"},
	} {
		t.Run(c.system+"/"+c.name, func(t *testing.T) {
			if _, err := compat.Build(c.system, compat.Input{Config: []byte(c.config)}); err != nil {
				t.Errorf("one block: %v", err)
			}
		})
	}
}

func TestInputErrors(t *testing.T) {
	cfg := []byte("x")
	for _, c := range []struct {
		name    string
		system  string
		in      compat.Input
		problem compat.Problem
		fields  compat.Field
	}{
		{"hash for nginx", "nginx", compat.Input{Config: cfg, Hash: "md5"}, compat.NotTaken, compat.Hash},
		{"servers and hash tag for redis", "redis", compat.Input{Servers: "a", HashTag: "{}"}, compat.NotTaken, compat.Servers | compat.HashTag},
		{"nothing for twemproxy", "twemproxy", compat.Input{}, compat.Missing, compat.Config | compat.Servers},
		{"config and servers", "twemproxy", compat.Input{Config: cfg, Servers: "a:1:1"}, compat.Conflict, compat.Config | compat.Servers},
		{"config and hash", "twemproxy", compat.Input{Config: cfg, Hash: "md5", HashTag: "{}"}, compat.Conflict, compat.Config | compat.Hash | compat.HashTag},
		{"select without config", "twemproxy", compat.Input{Select: "alpha", Servers: "a:1:1"}, compat.Missing, compat.Config},
		{"no config for nginx", "nginx", compat.Input{}, compat.Missing, compat.Config},
		{"no servers for libmemcached", "libmemcached", compat.Input{Hash: "md5"}, compat.Missing, compat.Servers},
		{"config for envoy", "envoy", compat.Input{Config: cfg}, compat.NotTaken, compat.Config},
		{"select for cassandra", "cassandra", compat.Input{Config: cfg, Select: "x"}, compat.NotTaken, compat.Select},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := compat.Build(c.system, c.in)
			var ie *compat.InputError
			if !errors.As(err, &ie) || !errors.Is(err, compat.ErrInput) || ie.System != c.system || ie.Problem != c.problem || ie.Fields != c.fields {
				t.Errorf("Build: err = %#v, want an InputError %v of %v", err, c.problem, c.fields)
			}
			if err := compat.Check(c.system, c.in); !errors.As(err, &ie) || ie.Problem != c.problem || ie.Fields != c.fields {
				t.Errorf("Check: err = %#v, want an InputError %v of %v", err, c.problem, c.fields)
			}
		})
	}
	if _, err := compat.Build("memcachedx", compat.Input{}); !errors.Is(err, compat.ErrUnknown) {
		t.Errorf("unknown system: err = %v", err)
	}
	// Check reads no content: a config it is not given is no error.
	if err := compat.Check("haproxy", compat.Input{Config: []byte{}, Select: "web"}); err != nil {
		t.Errorf("Check of right fields: %v", err)
	}
	if _, err := compat.Blocks("redis", []byte(clusterNodes)); !errors.Is(err, compat.ErrInput) {
		t.Errorf("Blocks of a system without blocks: err = %v", err)
	}
}

// TestDescribe checks that an InputError can name fields as a command's
// flags.
func TestDescribe(t *testing.T) {
	flag := func(f compat.Field) string { return "--" + strings.ReplaceAll(f.String(), " ", "-") }
	for _, c := range []struct {
		system string
		in     compat.Input
		want   string
	}{
		{"twemproxy", compat.Input{}, "--algo twemproxy needs --config nutcracker.yml or --servers 'host:port:weight [name]',..."},
		{"nginx", compat.Input{Config: []byte("x"), HashTag: "{}"}, "--hash-tag does not apply to --algo nginx"},
		{"twemproxy", compat.Input{Config: []byte("x"), Hash: "md5"}, "--config and --hash exclude each other: the pool's own hash, hash_tag and distribution apply"},
		{"haproxy", compat.Input{Select: "b"}, "--algo haproxy needs --config haproxy.cfg or a backend section to choose a backend from"},
	} {
		t.Run(c.want, func(t *testing.T) {
			_, err := compat.Build(c.system, c.in)
			var ie *compat.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an InputError", err)
			}
			if got := ie.Describe(flag, "--algo "+c.system); got != c.want {
				t.Errorf("Describe = %q\nwant       %q", got, c.want)
			}
		})
	}
}

// TestContentErrors checks that what a description holds is refused with
// the sentinels of package kolco, and a nil placement.
func TestContentErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		system string
		in     compat.Input
		want   error
	}{
		{"duplicate goredis shard", "goredis", compat.Input{Servers: "a=h:1,a=h:2"}, kolco.ErrDuplicateNode},
		{"goredis shard without name", "goredis", compat.Input{Servers: "h:1"}, kolco.ErrBadConfig},
		{"goredis shard without port", "goredis", compat.Input{Servers: "a=h"}, kolco.ErrBadConfig},
		{"envoy weight 0", "envoy", compat.Input{Servers: "a=0"}, kolco.ErrBadWeight},
		{"envoy distribution", "envoy", compat.Input{Servers: "a", Distribution: "random"}, kolco.ErrBadConfig},
		{"not yaml", "twemproxy", compat.Input{Config: []byte("a: [")}, kolco.ErrBadConfig},
		{"servers not a list", "twemproxy", compat.Input{Config: []byte("a:\n  servers: 3\n")}, kolco.ErrBadConfig},
		{"empty nutcracker.yml", "twemproxy", compat.Input{Config: []byte{}}, kolco.ErrNoNodes},
		{"pool without servers", "twemproxy", compat.Input{Config: []byte("a:\n  hash: md5\n")}, kolco.ErrNoNodes},
		{"haproxy without backends", "haproxy", compat.Input{Config: []byte("global\n maxconn 1\n")}, kolco.ErrNoNodes},
		{"nginx unbalanced", "nginx", compat.Input{Config: []byte("http { upstream a { server b; }")}, kolco.ErrBadConfig},
		{"upstream twice", "nginx", compat.Input{Config: []byte("upstream a { server b; } upstream a { server c; }"), Select: "a"}, kolco.ErrBadConfig},
		{"bad twemproxy server", "twemproxy", compat.Input{Servers: "nohost"}, twemproxy.ErrBadServer},
		{"duplicate libmemcached server", "libmemcached", compat.Input{Servers: "a:1,a:1"}, kolco.ErrDuplicateNode},
		{"duplicate pymemcache server", "pymemcache", compat.Input{Servers: "a,a"}, kolco.ErrDuplicateNode},
		{"no goredis shards", "goredis", compat.Input{Servers: ","}, kolco.ErrNoNodes},
		{"duplicate envoy ring host", "envoy", compat.Input{Servers: "a,a"}, kolco.ErrDuplicateNode},
		{"duplicate envoy maglev host", "envoy", compat.Input{Servers: "a,a", Distribution: "maglev"}, kolco.ErrDuplicateNode},
		{"duplicate grpc endpoint", "grpc", compat.Input{Servers: "a,a"}, kolco.ErrDuplicateNode},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := compat.Build(c.system, c.in)
			if !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
			// A nil interface, not one holding a nil pointer whose
			// first Locate panics.
			if p != nil {
				t.Errorf("Build failed but returned a non-nil placement (%T)", p)
			}
		})
	}
}

// TestRegistry checks that every system is found by its name and that
// what it says it takes agrees with its hints.
func TestRegistry(t *testing.T) {
	names := compat.Names()
	if !slices.IsSorted(names) || len(names) != 10 {
		t.Fatalf("Names = %v, want the ten systems sorted", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			s, ok := compat.Lookup(name)
			switch {
			case !ok || s.Name != name || s.Summary == "":
				t.Fatalf("Lookup = %+v, %v", s, ok)
			case (s.Takes&compat.Config != 0) != (s.ConfigHint != ""):
				t.Errorf("takes %v with config hint %q", s.Takes, s.ConfigHint)
			case (s.Takes&compat.Servers != 0) != (s.ServersHint != ""):
				t.Errorf("takes %v with servers hint %q", s.Takes, s.ServersHint)
			case (s.Takes&compat.Select != 0) != (s.Block != ""):
				t.Errorf("takes %v with block %q", s.Takes, s.Block)
			}
		})
	}
	if fmt.Sprint(compat.Hash|compat.HashTag) != "hash and hash tag" {
		t.Errorf("Field set String = %q", fmt.Sprint(compat.Hash|compat.HashTag))
	}
}
