package faults

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/kolco-dev/kolco/algo"
)

// Combo is one combination of the options users run a pool with.
type Combo struct {
	Redis bool
	// Store is a Redis pool whose changes move its keys; else a cache.
	Store bool
	// Ejection is none, rehash or fail-fast.
	Ejection string
	// Source is where the servers come from: static (the configuration's
	// list, changed by a reload), file, etcd, gossip or sentinel.
	Source string
	// Copies is how many servers hold each key (replicas).
	Copies int
	// ReplicaReads sends reads to a Sentinel shard's replicas.
	ReplicaReads bool
	// Algorithm is the pool's distribution.
	Algorithm string
}

// The axes of the matrix.
var (
	ejections = []string{"none", "rehash", "fail-fast"}
	sources   = []string{"static", "file", "etcd", "gossip", "sentinel"}
)

// algorithms are twemproxy's two and every one of kolco's.
func algorithms() []string { return append([]string{"ketama", "modula"}, algo.Names()...) }

// drawCombo picks a combination. Every axis is drawn on its own, so that
// combinations the configuration refuses come up too: the run checks
// them with kolco proxy --check and says why it skips them.
func drawCombo(rng *rand.Rand) Combo {
	c := Combo{
		Redis:     rng.IntN(2) == 0,
		Ejection:  ejections[rng.IntN(len(ejections))],
		Source:    sources[rng.IntN(len(sources))],
		Copies:    1,
		Algorithm: pick(rng, algorithms()),
	}
	c.Store = c.Redis && rng.IntN(2) == 0
	if rng.IntN(4) == 0 {
		c.Copies = 2
	}
	c.ReplicaReads = c.Source == "sentinel" && rng.IntN(3) == 0
	return c
}

func pick(rng *rand.Rand, xs []string) string { return xs[rng.IntN(len(xs))] }

func (c Combo) protocol() string {
	if c.Redis {
		return "redis"
	}
	return "memcached"
}

func (c Combo) kind() string {
	if c.Store {
		return "store"
	}
	return "cache"
}

// String names the combination, as Atoms does, in one line.
func (c Combo) String() string {
	s := fmt.Sprintf("%s %s, ejection %s, source %s, distribution %s", c.protocol(), c.kind(), c.Ejection, c.Source, c.Algorithm)
	if c.Copies > 1 {
		s += fmt.Sprintf(", %d copies", c.Copies)
	}
	if c.ReplicaReads {
		s += ", replica reads"
	}
	return s
}

// Atoms are the words an exclusion matches the combination by.
func (c Combo) Atoms() []string {
	a := []string{c.protocol(), c.kind(), c.Ejection, c.Source, c.Algorithm}
	if c.Copies > 1 {
		a = append(a, "copies")
	}
	if c.ReplicaReads {
		a = append(a, "replica-reads")
	}
	return a
}

// historyDependent reports whether the distribution's placement depends
// on the order of changes (an etcd source keeps its state then).
func (c Combo) historyDependent() bool {
	return slices.Contains(algo.HistoryDependent(), c.Algorithm)
}

// twemproxy reports whether the distribution is twemproxy's.
func (c Combo) twemproxy() bool { return c.Algorithm == "ketama" || c.Algorithm == "modula" }

// Exclusion leaves out what matches all of its atoms: a combination, or a
// kind of fault in combinations, such as "stall" (every stall), "redis"
// (every Redis pool), "sentinel+rehash" or "memcached+rehash+stop".
type Exclusion struct {
	Atoms []string
	// Why is shown when it applies.
	Why string
}

// ParseExclusions reads a comma-separated list of exclusions, each atoms
// joined by "+". Every atom must be a word of the matrix or a fault kind.
func ParseExclusions(s, why string) ([]Exclusion, error) {
	known := map[string]bool{"memcached": true, "redis": true, "store": true, "cache": true, "copies": true, "replica-reads": true}
	for _, w := range slices.Concat(ejections, sources, algorithms()) {
		known[w] = true
	}
	for _, k := range faultKinds {
		known[k] = true
	}
	var out []Exclusion
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var atoms []string
		for a := range strings.SplitSeq(part, "+") {
			a = strings.TrimSpace(a)
			if !known[a] {
				return nil, fmt.Errorf("faults: exclusion %q: %q is no option or fault kind", part, a)
			}
			atoms = append(atoms, a)
		}
		out = append(out, Exclusion{Atoms: atoms, Why: why})
	}
	return out, nil
}

// faultOnly reports whether the exclusion names a fault kind, so that it
// leaves faults out rather than the combination.
func (e Exclusion) faultOnly() bool {
	return slices.ContainsFunc(e.Atoms, func(a string) bool { return slices.Contains(faultKinds, a) })
}

// matches reports whether every atom is in words.
func (e Exclusion) matches(words []string) bool {
	for _, a := range e.Atoms {
		if !slices.Contains(words, a) {
			return false
		}
	}
	return true
}

func (e Exclusion) String() string { return strings.Join(e.Atoms, "+") }
