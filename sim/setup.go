package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
)

// Setup names an algorithm of package algo and its options: one contender
// of an experiment.
type Setup struct {
	// Algo is the algorithm's name, as algo.New takes it.
	Algo string
	// Opts are its options.
	Opts algo.Options
}

// Label returns the setup's name for tables: the algorithm's name, with
// the vnode count for the ring.
func (s Setup) Label() string {
	if s.Algo == "ring" && s.Opts.VNodes > 0 {
		return fmt.Sprintf("ring(V=%d)", s.Opts.VNodes)
	}
	return s.Algo
}

// wrap names the setup in err, as in "ring(V=100): ...". An algorithm's
// own errors begin with its name already, which a bare label would only
// repeat ("jump: jump: ...").
func (s Setup) wrap(err error) error {
	if l := s.Label(); !strings.HasPrefix(err.Error(), l+": ") {
		return fmt.Errorf("%s: %w", l, err)
	}
	return err
}

// New builds the setup's placement over nodes.
func (s Setup) New(nodes []kolco.Node) (algo.Placement, error) {
	return algo.New(s.Algo, nodes, s.Opts)
}

// ringV returns the ring's points per node of a setup, 0 for the other
// algorithms.
func ringV(s Setup) int {
	if s.Algo == "ring" {
		return s.Opts.VNodes
	}
	return 0
}

// Progress is told of each finished step of a long computation.
type Progress func(done, total int, step string)

// step reports progress to p, if p is not nil.
func (p Progress) step(done, total int, name string) {
	if p != nil {
		p(done, total, name)
	}
}

// nodeNames returns n nodes named prefix-0 ... prefix-(n-1).
func nodeNames(prefix string, n int) []kolco.Node {
	nodes := make([]kolco.Node, n)
	for i := range nodes {
		nodes[i] = kolco.Node{ID: prefix + "-" + strconv.Itoa(i)}
	}
	return nodes
}

// setPrefix is the node name prefix of name set s: "node" for the first,
// "set<s>-node" for the others, so that each set places the points of its
// nodes elsewhere.
func setPrefix(s int) string {
	if s == 0 {
		return "node"
	}
	return "set" + strconv.Itoa(s) + "-node"
}
