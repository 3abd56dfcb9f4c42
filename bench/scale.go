package bench

import (
	"math/rand/v2"
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/anchor"
	"github.com/kolco-dev/kolco/binomial"
	"github.com/kolco-dev/kolco/dx"
	"github.com/kolco-dev/kolco/flip"
	kjump "github.com/kolco-dev/kolco/jump"
	"github.com/kolco-dev/kolco/jumpback"
	"github.com/kolco-dev/kolco/jumpbackanchor"
	"github.com/kolco-dev/kolco/maglev"
	"github.com/kolco-dev/kolco/power"
)

// ScaleLib is one of kolco's placements measured from 10 to a million
// nodes: the constant-time consistent hashes beside jump, anchor and
// maglev.
type ScaleLib struct {
	// Name names the package.
	Name string
	// New builds the placement over the named nodes and returns its
	// lookup loop, Locate on the concrete type.
	New func(ids []string) (Loop, error)
	// Removed builds the placement over the named nodes, then removes
	// the given share of them one at a time, chosen at random (the same
	// nodes for every placement), and returns its lookup loop.
	Removed func(ids []string, share float64) (Loop, error)
}

// RemovalLibs returns the placements of [ScaleLibs] that keep removed
// nodes in a table of their own (all but maglev, which builds its table
// afresh on every change).
func RemovalLibs() []ScaleLib {
	libs := ScaleLibs()
	return slices.DeleteFunc(libs, func(l ScaleLib) bool { return l.Name == "maglev" })
}

// BigTable is the maglev table of the scale measurements above 1000 nodes:
// the largest prime maglev takes (2^24-3), 168 entries a node at 100,000
// nodes and 17 at a million (the paper advises 100 or more).
const BigTable = 16777213

// locator is what every kolco placement offers for a lookup, and the
// removal of nodes.
type locator interface {
	Locate(key string) (*kolco.Node, error)
	Remove(ids ...string) error
}

// LocateLoop returns the loop of Locate on p, summing the owners' name
// lengths.
func LocateLoop[P locator](p P) Loop {
	return func(keys []string) (acc int) {
		for _, k := range keys {
			n, _ := p.Locate(k)
			acc += len(n.ID)
		}
		return acc
	}
}

// scaleLib adapts a constructor of a concrete placement.
func scaleLib[P locator](name string, build func(nodes []kolco.Node) (P, error)) ScaleLib {
	return ScaleLib{Name: name,
		New: func(ids []string) (Loop, error) {
			p, err := build(kolcoNodes(ids))
			if err != nil {
				return nil, err
			}
			return LocateLoop(p), nil
		},
		Removed: func(ids []string, share float64) (Loop, error) {
			p, err := build(kolcoNodes(ids))
			if err != nil {
				return nil, err
			}
			for _, id := range RemovedIDs(ids, share) {
				if err := p.Remove(id); err != nil {
					return nil, err
				}
			}
			return LocateLoop(p), nil
		}}
}

// RemovedIDs returns share of ids chosen at random, the same every time
// for the same ids, in the order of their removal.
func RemovedIDs(ids []string, share float64) []string {
	r := rand.New(rand.NewPCG(1, 2))
	var out []string
	for _, i := range r.Perm(len(ids))[:int(share*float64(len(ids)))] {
		out = append(out, ids[i])
	}
	return out
}

// ScaleLibs returns jump, jumpback, flip, binomial, power,
// jumpbackanchor, anchor, dx and maglev, each with its defaults (maglev
// with [BigTable] above 1000 nodes).
func ScaleLibs() []ScaleLib {
	return []ScaleLib{
		scaleLib("jump", func(n []kolco.Node) (*kjump.Placement, error) { return kjump.New(n, kjump.Config{}) }),
		scaleLib("jumpback", func(n []kolco.Node) (*jumpback.Placement, error) { return jumpback.New(n, jumpback.Config{}) }),
		scaleLib("flip", func(n []kolco.Node) (*flip.Placement, error) { return flip.New(n, flip.Config{}) }),
		scaleLib("binomial", func(n []kolco.Node) (*binomial.Placement, error) { return binomial.New(n, binomial.Config{}) }),
		scaleLib("power", func(n []kolco.Node) (*power.Placement, error) { return power.New(n, power.Config{}) }),
		scaleLib("jumpbackanchor", func(n []kolco.Node) (*jumpbackanchor.Placement, error) {
			return jumpbackanchor.New(n, jumpbackanchor.Config{})
		}),
		scaleLib("anchor", func(n []kolco.Node) (*anchor.Placement, error) { return anchor.New(n, anchor.Config{}) }),
		scaleLib("dx", func(n []kolco.Node) (*dx.Placement, error) { return dx.New(n, dx.Config{}) }),
		scaleLib("maglev", func(n []kolco.Node) (*maglev.Table, error) {
			cfg := maglev.Config{}
			if len(n) > 1000 {
				cfg.TableSize = BigTable
			}
			return maglev.New(n, cfg)
		}),
	}
}
