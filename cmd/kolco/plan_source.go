package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/compat"
	"github.com/kolco-dev/kolco/sim"
	"github.com/kolco-dev/kolco/sim/theory"
)

// planSource is what kolco plan compares: the placements before and after
// each change, built once the flags are known to be right.
type planSource struct {
	label  string
	theory func(before, after []kolco.Node) float64
	build  func() ([]planStep, error)
}

// planStep is one placement of a plan, and the names of its nodes where
// the plan calls them by another (their address): name -> ID in p.
type planStep struct {
	p     kolco.Placement
	names map[string]string
}

func (s planSource) placements() ([]planStep, error) { return s.build() }

func placementsOf(steps []planStep) []kolco.Placement {
	out := make([]kolco.Placement, len(steps))
	for i, s := range steps {
		out[i] = s.p
	}
	return out
}

// source checks the flags that describe the placements, before any file
// is read, and returns how to build them: another system's descriptions
// before and after (--to), or kolco's algorithm with a change.
func (lf *planFlags) source(pf *placementFlags, cf *compatFlags, fs *pflag.FlagSet) (planSource, error) {
	if sys, ok := compat.Lookup(pf.algo); ok {
		return lf.compatSource(sys, pf, cf, fs)
	}
	if err := rejectCompatFlags(pf.algo, fs); err != nil {
		return planSource{}, err
	}
	return lf.kolcoSource(pf, fs)
}

// compatSource plans the change between descriptions of system sys: the
// flags' own, then each --to in the same form.
func (lf *planFlags) compatSource(sys compat.Info, pf *placementFlags, cf *compatFlags, fs *pflag.FlagSet) (planSource, error) {
	if fs.Changed("reweight") {
		return planSource{}, usagef("--reweight does not apply to --algo %s: give its description after the change with --to", sys.Name)
	}
	b, err := cf.builder(sys, pf, fs)
	if err != nil {
		return planSource{}, err
	}
	if len(lf.to) == 0 {
		form := "a server list, as --servers"
		if b.fromConfig {
			form = "a configuration file, as --config"
		}
		return planSource{}, usagef("--algo %s plans the change between two of its descriptions: give the one after with --to (%s)", sys.Name, form)
	}
	label := sys.Name
	if b.in.Select != "" {
		label += "/" + b.in.Select
	}
	build := func() ([]planStep, error) {
		var steps []planStep
		for _, desc := range append([]string{b.own()}, lf.to...) {
			p, err := b.build(desc)
			if err != nil {
				return nil, err
			}
			step := planStep{p: p}
			if sys.DataByAddr {
				step = byAddress(p)
			}
			steps = append(steps, step)
		}
		return steps, nil
	}
	return planSource{label: label, build: build}, nil
}

// kolcoSource plans a change of kolco's algorithm: --add, --remove and
// --reweight, or the node sets of --to, applied in turn as a running
// system applies changes.
func (lf *planFlags) kolcoSource(pf *placementFlags, fs *pflag.FlagSet) (planSource, error) {
	opts, err := pf.options(fs)
	if err != nil {
		return planSource{}, err
	}
	ch := pf.change()
	for _, rw := range lf.reweight {
		id, w, ok := strings.Cut(rw, "=")
		v, err := strconv.ParseFloat(w, 64)
		if !ok || id == "" || err != nil {
			return planSource{}, usagef("--reweight %q: want ID=WEIGHT", rw)
		}
		ch.reweight = append(ch.reweight, reweight{id, v})
	}
	switch {
	case len(lf.to) > 0 && !ch.empty():
		return planSource{}, usagef("--to and --add, --remove, --reweight exclude each other: give the nodes after the change one way")
	case len(lf.to) == 0 && ch.empty():
		return planSource{}, usagef("no change: give --add, --remove, --reweight, or the nodes after it with --to")
	}
	setup := sim.Setup{Algo: strings.ToLower(pf.algo), Opts: opts}
	src := planSource{label: setup.Label()}
	if setup.Algo == "modulo" {
		src.theory = func(before, after []kolco.Node) float64 { return theory.ModuloMoved(len(before), len(after)) }
	}
	src.build = func() ([]planStep, error) {
		start, err := pf.loadNodes()
		if err != nil {
			return nil, err
		}
		if len(lf.to) == 0 {
			return changed(setup, start, []func(algo.Placement) error{ch.apply}, pf.fromFlags)
		}
		var changes []func(algo.Placement) error
		for prev, i := start, 0; i < len(lf.to); i++ {
			next, err := pf.loadVersion(lf.to[i])
			if err != nil {
				return nil, err
			}
			changes, prev = append(changes, applyVersion(lf.to[i], kolco.Diff(prev, next), pf.fromFlags)), next
		}
		return changed(setup, start, changes, pf.fromFlags)
	}
	return src, nil
}

// changed returns the placement of setup over nodes, and after it the
// placement after each change in turn, each built anew from nodes so that
// the steps are distinct values.
func changed(setup sim.Setup, nodes []kolco.Node, changes []func(algo.Placement) error, fromFlags func(error) error) ([]planStep, error) {
	steps := make([]planStep, 0, len(changes)+1)
	for i := 0; i <= len(changes); i++ {
		p, err := setup.New(nodes)
		if err != nil {
			return nil, fromFlags(err)
		}
		for _, apply := range changes[:i] {
			if err := apply(p); err != nil {
				return nil, err
			}
		}
		steps = append(steps, planStep{p: p})
	}
	return steps, nil
}

// applyVersion returns the step to the node set of the --to version: the
// change from the one before, applied as a whole, as a running system
// applies a new node list. A failure is the description's: a usage error
// when it was given on the command line.
func applyVersion(version string, c kolco.Change, fromFlags func(error) error) func(algo.Placement) error {
	return func(p algo.Placement) error {
		if err := p.Apply(c); err != nil {
			return fromFlags(fmt.Errorf("--to %s: %w", version, err))
		}
		return nil
	}
}

// byAddress returns p seen by its servers' addresses, for a system whose
// servers hold keys by address: a key moves when its server's address
// changes, whatever the names.
func byAddress(p kolco.Placement) planStep {
	v := addrView{p: p, nodes: map[string]*kolco.Node{}}
	names := map[string]string{}
	for _, n := range p.Nodes() {
		a := addrOf(n)
		names[n.ID] = a
		m := v.nodes[a]
		if m == nil {
			m = &kolco.Node{ID: a, Addr: a}
			v.nodes[a] = m
		}
		m.Weight += n.EffectiveWeight()
	}
	return planStep{p: v, names: names}
}

// addrOf returns the node's address, or its ID when it has none.
func addrOf(n kolco.Node) string {
	if n.Addr != "" {
		return n.Addr
	}
	return n.ID
}

// addrView is a placement whose nodes are its servers' addresses; names
// that share an address are one node, of their summed weight.
type addrView struct {
	p     kolco.Placement
	nodes map[string]*kolco.Node
}

func (v addrView) Locate(key string) (*kolco.Node, error) {
	n, err := v.p.Locate(key)
	if err != nil {
		return nil, err
	}
	return v.nodes[addrOf(*n)], nil
}

func (v addrView) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	all, err := v.p.LocateN(nil, key, max(n, len(v.p.Nodes())))
	if err != nil {
		return dst, err
	}
	start := len(dst)
	for _, o := range all {
		a := v.nodes[addrOf(o)]
		if len(dst)-start < n && !slices.ContainsFunc(dst[start:], func(x kolco.Node) bool { return x.ID == a.ID }) {
			dst = append(dst, *a)
		}
	}
	return dst, nil
}

func (v addrView) Nodes() []kolco.Node {
	out := make([]kolco.Node, 0, len(v.nodes))
	for _, n := range v.nodes {
		out = append(out, *n)
	}
	slices.SortFunc(out, func(a, b kolco.Node) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// resolveDown returns the nodes --down names as the plan calls them: a
// node of some placement before a change, by its ID or, where nodes are
// named by address, by its name in the system's description.
func resolveDown(down []string, steps []planStep) ([]string, error) {
	var out []string
	for _, d := range down {
		id, ok := resolveNode(d, steps[:len(steps)-1])
		if !ok {
			var known []string
			for _, n := range steps[0].p.Nodes() {
				known = append(known, n.ID)
			}
			return nil, usagef("--down %q names no node before the change (nodes: %s)", d, strings.Join(known, ", "))
		}
		out = append(out, id)
	}
	return out, nil
}

// resolveNode returns the ID of the node called name in one of steps: by
// its ID or, where nodes are named by address, by its name in the
// system's description.
func resolveNode(name string, steps []planStep) (string, bool) {
	id, ok := "", false
	for _, s := range steps {
		if a, named := s.names[name]; named {
			id, ok = a, true
		}
		if slices.ContainsFunc(s.p.Nodes(), func(n kolco.Node) bool { return n.ID == name }) {
			id, ok = name, true
		}
	}
	return id, ok
}
