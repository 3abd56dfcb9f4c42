package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/nodefile"
	"github.com/kolco-dev/kolco/ring"
)

// placementFlags are the flags that choose an algorithm and its nodes,
// shared by every subcommand that places keys.
type placementFlags struct {
	algo      string
	hash      string
	vnodes    int
	seed      bool
	zoneAware bool
	nodes     string
	nodesFile string
	add       string
	remove    string
}

func (p *placementFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&p.algo, "algo", "ring", "placement algorithm: ring")
	fs.StringVar(&p.hash, "hash", keyhash.Default, "key hash: "+strings.Join(keyhash.Names(), ", "))
	fs.IntVar(&p.vnodes, "vnodes", ring.DefaultVNodes, "virtual nodes per unit of weight (ring)")
	fs.BoolVar(&p.seed, "seed", false, "the seed article's ring: md5 and 100 vnodes unless --hash/--vnodes say otherwise")
	fs.BoolVar(&p.zoneAware, "zone-aware", false, "replicas in distinct zones first (ring)")
	fs.StringVar(&p.nodes, "nodes", "", "comma-separated node IDs (IDs may contain ':')")
	fs.StringVar(&p.nodesFile, "nodes-file", "", "file of nodes, one per line: ID [WEIGHT [ZONE]]")
	fs.StringVar(&p.add, "add", "", "comma-separated node IDs to add after building (weight 1)")
	fs.StringVar(&p.remove, "remove", "", "comma-separated node IDs to remove after adding")
}

// splitIDs splits a comma-separated list of node IDs, trimming spaces.
func splitIDs(s string) []string {
	var ids []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			ids = append(ids, f)
		}
	}
	return ids
}

// loadNodes returns the starting node set from --nodes or --nodes-file.
func (p *placementFlags) loadNodes() ([]kolco.Node, error) {
	switch {
	case p.nodes != "" && p.nodesFile != "":
		return nil, usagef("--nodes and --nodes-file exclude each other")
	case p.nodes != "":
		var nodes []kolco.Node
		for _, id := range splitIDs(p.nodes) {
			nodes = append(nodes, kolco.Node{ID: id})
		}
		if len(nodes) == 0 {
			return nil, usagef("--nodes lists no node IDs")
		}
		return nodes, nil
	case p.nodesFile != "":
		f, err := os.Open(p.nodesFile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		nodes, err := nodefile.Parse(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.nodesFile, err)
		}
		if len(nodes) == 0 {
			return nil, fmt.Errorf("%s: %w", p.nodesFile, kolco.ErrNoNodes)
		}
		return nodes, nil
	}
	return nil, usagef("no nodes: give --nodes or --nodes-file")
}

// ringConfig returns the ring configuration the flags select.
func (p *placementFlags) ringConfig(fs *pflag.FlagSet) (ring.Config, error) {
	cfg := ring.Config{VNodes: p.vnodes, ZoneAware: p.zoneAware}
	if p.seed {
		cfg = ring.Seed()
		cfg.ZoneAware = p.zoneAware
		if fs.Changed("vnodes") {
			cfg.VNodes = p.vnodes
		}
	}
	if p.vnodes < 1 {
		return cfg, usagef("--vnodes must be at least 1 (got %d)", p.vnodes)
	}
	if !p.seed || fs.Changed("hash") {
		h, err := keyhash.Parse(p.hash)
		if err != nil {
			return cfg, usageError{err}
		}
		cfg.Hash = h
	}
	return cfg, nil
}

// build returns the placement the flags describe, with --add and --remove
// applied in that order.
func (p *placementFlags) build(fs *pflag.FlagSet) (kolco.Placement, error) {
	if p.algo != "ring" {
		return nil, usagef("unknown --algo %q (known: ring)", p.algo)
	}
	cfg, err := p.ringConfig(fs)
	if err != nil {
		return nil, err
	}
	nodes, err := p.loadNodes()
	if err != nil {
		return nil, err
	}
	r, err := ring.New(nodes, cfg)
	if err != nil {
		return nil, err
	}
	var add []kolco.Node
	for _, id := range splitIDs(p.add) {
		add = append(add, kolco.Node{ID: id})
	}
	if err := r.Add(add...); err != nil {
		return nil, fmt.Errorf("--add: %w", err)
	}
	if ids := splitIDs(p.remove); len(ids) > 0 {
		if err := r.Remove(ids...); err != nil {
			return nil, fmt.Errorf("--remove: %w", err)
		}
	}
	return r, nil
}
