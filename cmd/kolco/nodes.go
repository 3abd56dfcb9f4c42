package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
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
	article   bool
	zoneAware bool
	nodes     string
	nodesFile string
	add       string
	remove    string
}

func (p *placementFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&p.algo, "algo", "ring", "placement algorithm: "+strings.Join(algo.Names(), ", "))
	fs.StringVar(&p.hash, "hash", keyhash.Default, "key hash: "+strings.Join(keyhash.Names(), ", "))
	fs.IntVar(&p.vnodes, "vnodes", ring.DefaultVNodes, "virtual nodes per unit of weight (ring)")
	registerArticle(fs, &p.article, "the article's semantics: md5 and 100 vnodes for the ring, md5 of \"node:key\" for rendezvous")
	fs.BoolVar(&p.zoneAware, "zone-aware", false, "replicas in distinct zones first (ring)")
	fs.StringVar(&p.nodes, "nodes", "", "comma-separated node IDs, such as cache-a,cache-b (IDs, not a count; IDs may contain ':')")
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
		if isCount(p.nodes) {
			return nil, usagef("--nodes %s would be one node named %q: --nodes takes node IDs here, such as --nodes cache-a,cache-b "+
				"(a node of that name goes in --nodes-file); counts of made-up nodes are for kolco sim", p.nodes, p.nodes)
		}
		return nodeList("--nodes", p.nodes)
	case p.nodesFile != "":
		return readNodeFile(p.nodesFile)
	}
	return nil, usagef("no nodes: give --nodes or --nodes-file")
}

// loadVersion returns the node set of a --to: a node file when the nodes
// before came from --nodes-file, else a list as --nodes takes.
func (p *placementFlags) loadVersion(to string) ([]kolco.Node, error) {
	if p.nodesFile != "" {
		return readNodeFile(to)
	}
	return nodeList("--to", to)
}

// nodeList returns the nodes of a comma-separated list of IDs given with
// flag. A mistake in it is a usage error.
func nodeList(flag, list string) ([]kolco.Node, error) {
	var nodes []kolco.Node
	seen := map[string]bool{}
	for _, id := range splitIDs(list) {
		if seen[id] {
			return nil, usagef("%s: %w: %q", flag, kolco.ErrDuplicateNode, id)
		}
		seen[id] = true
		nodes = append(nodes, kolco.Node{ID: id})
	}
	if len(nodes) == 0 {
		return nil, usagef("%s lists no node IDs", flag)
	}
	return nodes, nil
}

// The flag --nodes takes what each command needs, and its help says which:
// node IDs where keys are placed on named nodes (locate, plan), one count of
// made-up nodes where an experiment runs on one node set (sim remap,
// failure, hotkeys, replicas), and a list of counts where an experiment
// compares node counts (sim balance, lookup). A value of another kind is
// refused with a line that says which kind the command takes and where
// the other kinds go, never read as the wrong kind: --nodes 10 to locate
// would otherwise place every key on one node named "10".

// isCount reports whether s is a decimal number alone, which --nodes of
// locate and plan would read as the ID of a single node.
func isCount(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// nodeCount is the --nodes of an experiment on one set of made-up nodes:
// a count. It implements pflag.Value, so that a value of another kind is
// refused while the flags are parsed, with a line saying what to give.
type nodeCount struct {
	n    *int
	file bool // the command also takes its nodes from --nodes-file
}

func (c nodeCount) String() string {
	if c.n == nil {
		return "0"
	}
	return strconv.Itoa(*c.n)
}

func (c nodeCount) Type() string { return "count" }

func (c nodeCount) Set(s string) error {
	if v, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		*c.n = v
		return nil
	}
	if _, err := parseInts("--nodes", s, 0); err == nil {
		return fmt.Errorf("one node count here, not a list: kolco sim balance and sim lookup compare several counts")
	}
	if c.file {
		return fmt.Errorf("a node count here, not node IDs: give your own nodes in --nodes-file")
	}
	return fmt.Errorf("a node count here, not node IDs: the experiment makes up its nodes")
}

// countFlag registers --nodes on fs as one count, def by default.
func countFlag(fs *pflag.FlagSet, n *int, def int, file bool, usage string) {
	*n = def
	fs.Var(nodeCount{n: n, file: file}, "nodes", usage)
}

// nodeCounts reads the --nodes of an experiment that compares node counts.
func nodeCounts(s string) ([]int, error) {
	ns, err := parseInts("--nodes", s, 1)
	if err != nil && !isCountList(s) {
		return nil, usagef("--nodes takes node counts here, one run each (such as 10,100,1000), not node IDs: "+
			"the experiment makes up its nodes (got %q)", s)
	}
	return ns, err
}

// isCountList reports whether s is a comma-separated list of numbers.
func isCountList(s string) bool {
	for _, f := range splitIDs(s) {
		if !isCount(f) {
			return false
		}
	}
	return true
}

// readNodeFile reads a node file; its failures are runtime errors.
func readNodeFile(path string) ([]kolco.Node, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	nodes, err := nodefile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%s: %w", path, kolco.ErrNoNodes)
	}
	return nodes, nil
}

// algoFlags are the flags that set an algorithm's options, with the
// option each sets.
var algoFlags = []struct {
	name string
	opt  algo.Option
}{{"hash", algo.HashOption}, {"vnodes", algo.VNodesOption}, {"article", algo.ArticleOption}, {"zone-aware", algo.ZoneAwareOption}}

// registerArticle registers --article with usage, and --seed, its former
// name, as a deprecated alias of it: it sets the same variable and prints a
// line saying so, so that scripts written for --seed keep working.
func registerArticle(fs *pflag.FlagSet, v *bool, usage string) {
	fs.BoolVar(v, "article", false, usage)
	fs.BoolVar(v, "seed", false, usage)
	_ = fs.MarkDeprecated("seed", "use --article") // the flag exists: registered just above
}

// flagGiven reports whether the flag name was given, and under which name:
// --article also as its deprecated alias --seed.
func flagGiven(fs *pflag.FlagSet, name string) (given string, ok bool) {
	if name == "article" && fs.Changed("seed") {
		return "seed", true
	}
	return name, fs.Changed(name)
}

// rejectUnread refuses an option flag given that none of the algorithms
// reads: it would change nothing.
func rejectUnread(fs *pflag.FlagSet, algos ...algo.Info) error {
	var reads algo.Option
	var names []string
	for _, a := range algos {
		reads |= a.Options
		names = append(names, a.Name)
	}
	var takes []string
	for _, f := range algoFlags {
		if reads.Has(f.opt) && fs.Lookup(f.name) != nil {
			takes = append(takes, "--"+f.name)
		}
	}
	for _, f := range algoFlags {
		given, ok := flagGiven(fs, f.name)
		if !ok || reads.Has(f.opt) {
			continue
		}
		if len(takes) == 0 {
			return usagef("--%s does not apply to --algo %s, which takes no option flag", given, strings.Join(names, ","))
		}
		return usagef("--%s does not apply to --algo %s (it takes %s)", given, strings.Join(names, ","), strings.Join(takes, ", "))
	}
	return nil
}

// options returns the algorithm options the flags select.
func (p *placementFlags) options(fs *pflag.FlagSet) (algo.Options, error) {
	a, ok := algo.Lookup(p.algo)
	if !ok {
		return algo.Options{}, unknownName("--algo", p.algo, algoNames(algo.Names()))
	}
	if err := rejectUnread(fs, a); err != nil {
		return algo.Options{}, err
	}
	if p.vnodes < 1 {
		return algo.Options{}, usagef("--vnodes must be at least 1 (got %d)", p.vnodes)
	}
	o := algo.Options{Article: p.article, ZoneAware: p.zoneAware}
	if !p.article || fs.Changed("vnodes") {
		o.VNodes = p.vnodes
	}
	if fs.Changed("hash") { // else each algorithm's own default (xxh3; md5 in article mode; CRC16 for slots)
		h, err := keyhash.Parse(p.hash)
		if err != nil {
			return o, usageError{err}
		}
		o.Hash = h
	}
	return o, nil
}

// build returns the placement the flags describe, with --add and --remove
// applied in that order, as a running system would see them. An error
// caused by the command line alone (bad options, duplicate or unknown IDs
// in --nodes, --add, --remove) is a usage error; with --nodes-file the
// nodes come from a file and a failure is a runtime error.
func (p *placementFlags) build(fs *pflag.FlagSet) (algo.Placement, error) {
	opts, err := p.options(fs)
	if err != nil {
		return nil, err
	}
	nodes, err := p.loadNodes()
	if err != nil {
		return nil, err
	}
	pl, err := algo.New(p.algo, nodes, opts)
	if err != nil {
		return nil, p.fromFlags(err)
	}
	if err := p.change().apply(pl); err != nil {
		return nil, err
	}
	return pl, nil
}

// fromFlags returns err, about the starting nodes, as a usage error when
// they came from the command line (--nodes).
func (p *placementFlags) fromFlags(err error) error {
	if p.nodesFile == "" {
		return usageError{err}
	}
	return err
}

// change returns the change --add and --remove describe.
func (p *placementFlags) change() nodeChange {
	var c nodeChange
	for _, id := range splitIDs(p.add) {
		c.add = append(c.add, kolco.Node{ID: id})
	}
	c.remove = splitIDs(p.remove)
	return c
}

// nodeChange is a change of membership given on the command line: nodes
// that join, leave and change weight, applied in that order.
type nodeChange struct {
	add      []kolco.Node
	remove   []string
	reweight []reweight
}

// reweight is one --reweight ID=W.
type reweight struct {
	id     string
	weight float64
}

func (c nodeChange) empty() bool { return len(c.add)+len(c.remove)+len(c.reweight) == 0 }

// apply makes the change to p as a running system would. The flags are at
// fault for every failure - a node added twice, an unknown one removed or
// reweighted, every node removed - so each is a usage error naming its
// flag, whichever command applies the change.
func (c nodeChange) apply(p algo.Placement) error {
	if len(c.add) > 0 {
		if err := p.Add(c.add...); err != nil {
			return usageError{fmt.Errorf("--add: %w", err)}
		}
	}
	if len(c.remove) > 0 {
		if err := p.Remove(c.remove...); err != nil {
			return usageError{fmt.Errorf("--remove: %w", err)}
		}
		if len(p.Nodes()) == 0 {
			return usagef("--remove %s takes away every node: none is left to place keys on", strings.Join(c.remove, ","))
		}
	}
	for _, r := range c.reweight {
		if err := p.Reweight(r.id, r.weight); err != nil {
			return usageError{fmt.Errorf("--reweight %s=%g: %w", r.id, r.weight, err)}
		}
	}
	return nil
}
