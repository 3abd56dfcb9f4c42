package proxy

import (
	"errors"
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
)

// serverAt is the error of one server line of a pool, index from 0, so
// that ParseConfig can say the line of the file it is on.
type serverAt struct {
	index int
	err   error
}

func (e serverAt) Error() string { return fmt.Sprintf("%d: %v", e.index+1, e.err) }
func (e serverAt) Unwrap() error { return e.err }

// takesWeights reports whether kolco's distribution name weighs its
// servers: one that does not (flip, binomial, power, ...) refuses any
// weight but 1.
func takesWeights(name string) bool {
	_, err := algo.New(name, []kolco.Node{{ID: "a", Weight: 1}, {ID: "b", Weight: 2}}, algo.Options{})
	return !errors.Is(err, kolco.ErrBadWeight)
}

// checkWeights refuses, for a kolco distribution that takes no weights, a
// server line whose weight is not 1. nutcracker's server lines must carry
// a weight ("host:port:weight"), so the advice is to write 1, not to
// leave it out as a node list may.
func (p *PoolConfig) checkWeights(bad badSetting) error {
	if isTwemproxy(p) || takesWeights(p.Distribution) {
		return nil
	}
	for i, s := range p.Servers {
		if s.Weight != 1 {
			return bad("servers", "%w", serverAt{i, fmt.Errorf("%q has weight %d, but distribution %s takes no weights (every server weighs 1): "+
				"write its weight as 1 (host:port:1; a server line needs one, as in nutcracker), or use a distribution that takes weights, such as ring or rendezvous",
				s.String(), s.Weight, p.Distribution)})
		}
	}
	return nil
}
