package shards

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/compat/twemproxy"
	"github.com/kolco-dev/kolco/keyhash"
)

// ErrBadConfig is wrapped by every error about a [Config]: an unknown
// distribution or hash, a hash tag that is not two characters, or a
// setting that does not apply to the distribution. It wraps
// [kolco.ErrBadConfig].
var ErrBadConfig = fmt.Errorf("shards: %w", kolco.ErrBadConfig)

// DefaultDistribution is the distribution of a Config without one.
const DefaultDistribution = "ring"

// Config says how keys are placed on the servers, with the names and
// meanings of kolco proxy's pool settings (nutcracker.yml), so that a
// client configured like a pool places every key where that pool does.
// The zero value is kolco's ring with its defaults and no hash tag.
type Config struct {
	// Distribution is a kolco algorithm (algo.Names: ring, jump,
	// maglev, ...) or twemproxy's "ketama" or "modula". Empty means
	// "ring", kolco's default; kolco proxy's pools default to ketama, as
	// nutcracker's do, so name it to agree with a pool that names none.
	Distribution string
	// Hash is twemproxy's key hash for ketama and modula (fnv1a_64 when
	// empty, as nutcracker's default; see package compat/twemproxy). It
	// does not apply to kolco's algorithms.
	Hash string
	// KeyHash is the key hash of kolco's algorithms by name (package
	// keyhash: xxh3, xxh64, murmur3, ...); empty means the algorithm's
	// default. It does not apply to ketama and modula.
	KeyHash string
	// VNodes is the ring's points per unit of weight; 0 means the ring's
	// default. It applies to ring and bounded only.
	VNodes int
	// HashTag is empty or two characters such as "{}": a key holding
	// "{text}" with non-empty text is placed by the text alone, so that
	// related keys share a server (twemproxy's hash_tag rule).
	HashTag string
}

// distribution returns the distribution, the default for empty.
func (c Config) distribution() string { return cmp.Or(c.Distribution, DefaultDistribution) }

// twemproxy reports whether the distribution is one of twemproxy's.
func (c Config) twemproxy() bool {
	d := c.distribution()
	return d == twemproxy.Ketama || d == twemproxy.Modula
}

// Validate reports whether c describes a placement: the error wraps
// [ErrBadConfig] (and algo.ErrUnknown or keyhash.ErrUnknown for an unknown
// name).
func (c Config) Validate() error {
	_, err := c.options(nil)
	return err
}

// HistoryDependent reports whether the distribution places keys by the
// history of changes as well as by the node set (jump, jumpback,
// jumpbackanchor, flip, binomial, power, anchor, dx, slots; see algo.Info).
func (c Config) HistoryDependent() bool {
	a, ok := algo.Lookup(c.distribution())
	return ok && a.HistoryDependent
}

// options checks c and returns the algo options it gives for nodes.
func (c Config) options(nodes []kolco.Node) (algo.Options, error) {
	if len(c.HashTag) != 0 && len(c.HashTag) != 2 {
		return algo.Options{}, fmt.Errorf("%w: hash tag %q is not two characters", ErrBadConfig, c.HashTag)
	}
	if c.VNodes < 0 {
		return algo.Options{}, fmt.Errorf("%w: vnodes %d is negative", ErrBadConfig, c.VNodes)
	}
	if c.twemproxy() {
		if c.KeyHash != "" || c.VNodes != 0 {
			return algo.Options{}, fmt.Errorf("%w: key hash and vnodes do not apply to %s (it hashes with Hash)", ErrBadConfig, c.distribution())
		}
		return algo.Options{}, nil
	}
	if _, ok := algo.Lookup(c.distribution()); !ok {
		return algo.Options{}, fmt.Errorf("%w: distribution %q: %w (known: ketama, modula, %s)", ErrBadConfig, c.Distribution, algo.ErrUnknown, strings.Join(algo.Names(), ", "))
	}
	if c.Hash != "" {
		return algo.Options{}, fmt.Errorf("%w: hash %q is twemproxy's and does not apply to %s (use KeyHash)", ErrBadConfig, c.Hash, c.distribution())
	}
	if c.VNodes != 0 && c.distribution() != "ring" && c.distribution() != "bounded" {
		return algo.Options{}, fmt.Errorf("%w: vnodes do not apply to %s", ErrBadConfig, c.distribution())
	}
	o := algo.Options{VNodes: c.VNodes}
	if c.KeyHash != "" {
		h, err := keyhash.Parse(c.KeyHash)
		if err != nil {
			return algo.Options{}, fmt.Errorf("%w: %w", ErrBadConfig, err)
		}
		o.Hash = h
	}
	// As kolco proxy: replicas take distinct zones first when the pool
	// has zones. Zones never move an owner, only the order of the rest.
	o.ZoneAware = slices.ContainsFunc(nodes, func(n kolco.Node) bool { return n.Zone != "" })
	return o, nil
}

// errTwemproxyServer is wrapped when a node cannot be a twemproxy server.
var errTwemproxyServer = errors.New("not a twemproxy server")

// buildTwemproxy returns twemproxy's placement over nodes, which must be
// sorted by ID, so that its server indexes are the nodes' positions. Each
// server is named by its node's ID (a name is what twemproxy hashes when
// given, and ParseNutcracker's IDs are the names twemproxy hashes) and
// dialed at its address; the weight is rounded down, at least 1.
func buildTwemproxy(c Config, nodes []kolco.Node) (*twemproxy.Pool, error) {
	servers := make([]twemproxy.Server, len(nodes))
	for i, n := range nodes {
		s := twemproxy.Server{Name: n.ID, Weight: max(int(n.EffectiveWeight()), 1)}
		addr := cmp.Or(n.Addr, n.ID)
		if strings.HasPrefix(addr, "/") {
			s.Host = addr
		} else {
			host, port, err := net.SplitHostPort(addr)
			p, perr := strconv.Atoi(port)
			if err != nil || perr != nil {
				return nil, fmt.Errorf("%w: node %q: address %q: %w", ErrBadConfig, n.ID, addr, errTwemproxyServer)
			}
			s.Host, s.Port = host, p
		}
		servers[i] = s
	}
	return twemproxy.New(twemproxy.Config{Hash: c.Hash, Distribution: c.distribution()}, servers)
}
