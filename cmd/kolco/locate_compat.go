package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/compat"
)

// compatFlags describe another system's servers in that system's own terms;
// package compat reads them.
type compatFlags struct {
	config       string
	pool         string
	upstream     string
	backend      string
	servers      string
	distribution string
	hashTag      string
}

func (c *compatFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "the other system's configuration: nutcracker.yml, nginx.conf or an upstream block, haproxy.cfg or a backend, CLUSTER NODES output, nodetool ring output")
	fs.StringVar(&c.pool, "pool", "", "the pool (twemproxy), upstream (nginx) or backend (haproxy) of --config to use (default: the only one)")
	fs.StringVar(&c.upstream, "upstream", "", "nginx: the upstream of --config to use, as --pool")
	fs.StringVar(&c.backend, "backend", "", "haproxy: the backend or listen section of --config to use, as --pool")
	fs.StringVar(&c.servers, "servers", "", "comma-separated servers in the system's own syntax (twemproxy 'host:port:weight [name]', libmemcached 'host:port[:weight]' as memcached_servers_parse reads it, pymemcache 'host:port', goredis 'name=host:port', envoy 'key[=weight]')")
	fs.StringVar(&c.distribution, "distribution", "", "twemproxy: ketama|modula; libmemcached: modula|ketama|ketama_weighted|ketama_spy; envoy: ring_hash|maglev")
	fs.StringVar(&c.hashTag, "hash-tag", "", "twemproxy: two characters such as {}")
}

// compatFlagNames are the flags only other systems take.
var compatFlagNames = []string{"config", "pool", "upstream", "backend", "servers", "distribution", "hash-tag"}

// kolcoOnlyFlags are the flags only kolco's own algorithms take.
var kolcoOnlyFlags = []string{"nodes", "nodes-file", "add", "remove", "vnodes", "article", "seed", "zone-aware"}

// rejectCompatFlags refuses the other systems' flags with kolco's own algorithms.
func rejectCompatFlags(algo string, fs *pflag.FlagSet) error {
	for _, f := range compatFlagNames {
		if fs.Changed(f) {
			return usagef("--%s does not apply to --algo %s", f, algo)
		}
	}
	return nil
}

// buildCompat returns the placement of system s from the flags.
func (c *compatFlags) buildCompat(s compat.Info, pf *placementFlags, fs *pflag.FlagSet) (kolco.Placement, error) {
	b, err := c.builder(s, pf, fs)
	if err != nil {
		return nil, err
	}
	return b.build(b.own())
}

// compatBuilder builds placements of one system from flags already
// checked: the flags' own description of its servers, or another in the
// same form (kolco plan's --to).
type compatBuilder struct {
	sys        compat.Info
	in         compat.Input
	selFlag    string // the flag that chose a block: --pool, --upstream or --backend
	fromConfig bool   // the description is a configuration file, not a server list
}

// builder checks the flags for system s, before any file is read. A
// mistake in them is a usage error.
func (c *compatFlags) builder(s compat.Info, pf *placementFlags, fs *pflag.FlagSet) (compatBuilder, error) {
	for _, f := range kolcoOnlyFlags {
		if fs.Changed(f) {
			return compatBuilder{}, usagef("--%s does not apply to --algo %s: describe its servers with --config or --servers", f, s.Name)
		}
	}
	selFlag, err := c.selectFlag(s, fs)
	if err != nil {
		return compatBuilder{}, err
	}
	b := compatBuilder{sys: s, selFlag: selFlag, fromConfig: fs.Changed("config"),
		in: compat.Input{Servers: c.servers, Distribution: c.distribution, HashTag: c.hashTag,
			Select: map[string]string{"pool": c.pool, "upstream": c.upstream, "backend": c.backend}[selFlag]}}
	if fs.Changed("hash") {
		b.in.Hash = pf.hash
	}
	if b.fromConfig {
		b.in.Config, b.in.ConfigName = []byte{}, c.config // given: read once the flags are known to be right
	}
	if err := compat.Check(s.Name, b.in); err != nil {
		return compatBuilder{}, b.error(err, true)
	}
	return b, nil
}

// own returns the description the flags give: the --config file or the
// --servers list.
func (b compatBuilder) own() string {
	if b.fromConfig {
		return b.in.ConfigName
	}
	return b.in.Servers
}

// build returns the placement of desc, a configuration file to read or a
// server list, as the flags gave theirs. A server list the system refuses
// is a usage error; a configuration it refuses is a runtime failure, as
// nodes from --nodes and --nodes-file are.
func (b compatBuilder) build(desc string) (kolco.Placement, error) {
	in := b.in
	if b.fromConfig {
		data, err := os.ReadFile(desc)
		if err != nil {
			return nil, err
		}
		in.Config, in.ConfigName = data, desc
	} else {
		in.Servers = desc
	}
	p, err := compat.Build(b.sys.Name, in)
	if err != nil {
		b.in = in // name this description in the error
		return nil, b.error(err, !b.fromConfig)
	}
	return p, nil
}

// error returns err from package compat as the command reports it: in the
// flags' terms, and as a usage error when the flags are at fault
// (fromFlags: the description itself came from the command line).
func (b compatBuilder) error(err error, fromFlags bool) error {
	var ie *compat.InputError
	var se *compat.SelectError
	switch {
	case errors.As(err, &ie):
		flag := func(f compat.Field) string { return "--" + compatFlag(f, b.selFlag) }
		return usageError{errors.New(ie.Describe(flag, "--algo "+b.sys.Name))}
	case errors.As(err, &se) && se.Name == "":
		return usagef("%s has %d %ss (%s): choose one with --%s", b.in.ConfigName, len(se.Names), se.Kind, strings.Join(se.Names, ", "), b.selFlag)
	case errors.As(err, &se):
		return usagef("%s has no %s %q (%ss: %s)", b.in.ConfigName, se.Kind, se.Name, se.Kind, strings.Join(se.Names, ", "))
	case fromFlags:
		return usageError{err}
	}
	return err
}

// selectFlag returns the flag that chooses among s's pools, upstreams or
// backends: --pool for any, or the system's own word, --upstream for nginx
// and --backend for haproxy.
func (c *compatFlags) selectFlag(s compat.Info, fs *pflag.FlagSet) (string, error) {
	chosen := "pool"
	for _, f := range []string{"upstream", "backend"} {
		switch {
		case !fs.Changed(f):
		case f != s.Block:
			return "", usagef("--%s does not apply to --algo %s", f, s.Name)
		case fs.Changed("pool"):
			return "", usagef("--pool and --%s exclude each other", f)
		default:
			chosen = f
		}
	}
	if s.Block != "" && !fs.Changed(chosen) {
		chosen = s.Block
	}
	return chosen, nil
}

// compatFlag returns the flag of an Input field; sel is the one that
// chooses a pool, upstream or backend.
func compatFlag(f compat.Field, sel string) string {
	switch f {
	case compat.Config:
		return "config"
	case compat.Select:
		return sel
	case compat.Servers:
		return "servers"
	case compat.Distribution:
		return "distribution"
	case compat.Hash:
		return "hash"
	case compat.HashTag:
		return "hash-tag"
	}
	return fmt.Sprint(f)
}

// algoNames lists every --algo value: kolco's algorithms, then the systems.
func algoNames(own []string) []string {
	all := append(append([]string(nil), own...), compat.Names()...)
	sort.Strings(all[len(own):])
	return all
}

// algoList is algoNames of kolco's algorithms as one line, for help texts.
func algoList() string { return strings.Join(algoNames(algo.Names()), ", ") }
