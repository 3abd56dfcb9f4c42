// Package fragment groups the keys of a request by the server each goes
// to, as nutcracker fragments a request of several keys: one part per
// server, in the order of each server's first key, each part's keys in
// the order of the request. It is what the Splitters of the proxy's
// codecs (proxy/memcache, proxy/redis) share; each writes its parts and
// merges their replies in its own protocol.
package fragment

import "slices"

// Part is the keys of a request that go to one server.
type Part struct {
	// Server is the index the caller's function gave for the part's keys.
	Server int
	// Keys is the number of the request's keys in the part.
	Keys int
}

// Groups is a request's keys grouped by server. It is reused from request
// to request without allocating; it is not safe for concurrent use.
type Groups struct {
	// Parts are the parts, in the order of their first key.
	Parts []Part
	// Group is each key's part, and Pos its place among the part's keys.
	Group []int32
	Pos   []int32

	order []int32 // the keys sorted by part, in the request's order within a part
	first []int32 // where each part's keys start in order
	part  []int32 // server index -> part index + 1, 0 when none
}

// Split groups n keys by server: server returns the index of key i's
// server, from 0.
func (g *Groups) Split(n int, server func(i int) int) {
	g.Parts, g.Group, g.Pos = g.Parts[:0], g.Group[:0], g.Pos[:0]
	for i := range n {
		srv := server(i)
		for srv >= len(g.part) {
			g.part = append(g.part, 0)
		}
		p := g.part[srv]
		if p == 0 {
			g.Parts = append(g.Parts, Part{Server: srv})
			p = int32(len(g.Parts))
			g.part[srv] = p
		}
		g.Group = append(g.Group, p-1)
		g.Pos = append(g.Pos, int32(g.Parts[p-1].Keys))
		g.Parts[p-1].Keys++
	}
	// A counting sort of the keys by part, so that each part's keys are
	// found without a search.
	g.first = slices.Grow(g.first[:0], len(g.Parts))[:len(g.Parts)]
	at := 0
	for i, p := range g.Parts {
		g.first[i] = int32(at)
		at += p.Keys
		g.part[p.Server] = 0 // ready for the next request
	}
	g.order = slices.Grow(g.order[:0], n)[:n]
	for k := range n {
		g.order[int(g.first[g.Group[k]])+int(g.Pos[k])] = int32(k)
	}
}

// Keys returns the indexes of part i's keys, in the request's order. The
// slice is the Groups' and changes with the next Split.
func (g *Groups) Keys(i int) []int32 {
	start := g.first[i]
	return g.order[start : int(start)+g.Parts[i].Keys]
}
