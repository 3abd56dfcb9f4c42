package memcache

import (
	"bytes"
	"slices"
)

// Part is one request a [Splitter] sends to one server: a retrieval of
// the keys that server holds.
type Part struct {
	// Server is the index the caller's function gave for the part's keys.
	Server int
	// Keys is the number of the request's keys in the part.
	Keys int

	first int // where the part's keys start in Splitter.order
}

// Reply is a server's reply to one part: its bytes and where its values
// lie, as [ReplyReader.Read] returns them. A part whose server failed has
// none.
type Reply struct {
	Data  []byte
	Spans []Span
}

// Splitter splits a retrieval of several keys (get, gets, gat, gats) into
// one request per server, each with that server's keys in the order of
// the request, and reads their replies back in the order of the
// request's keys, as nutcracker fragments and coalesces a multi-key get.
// Each server answers its keys in the order it got them, so one cursor per
// part finds every value without a search. A Splitter is reused from
// request to request without allocating; it is not safe for concurrent
// use.
type Splitter struct {
	req   *Request
	parts []Part
	group []int32 // for each key of the request, its part
	order []int32 // keys sorted by part, in the request's order within a part
	part  []int32 // server index -> part index + 1, 0 when none
	keys  [][]byte
	// The replies being read back, and a cursor into each part's spans.
	replies []Reply
	cursor  []int
}

// Split groups the keys of req, a retrieval, by server: server maps a key
// to the index of its server, from 0. Afterwards [Splitter.Parts] holds
// one part per server, in the order of their first key in the request.
func (s *Splitter) Split(req *Request, server func(key []byte) int) {
	s.req = req
	s.parts = s.parts[:0]
	s.group = s.group[:0]
	n := len(req.Keys)
	for i := range n {
		srv := server(req.Keys[i])
		for srv >= len(s.part) {
			s.part = append(s.part, 0)
		}
		p := s.part[srv]
		if p == 0 {
			s.parts = append(s.parts, Part{Server: srv})
			p = int32(len(s.parts))
			s.part[srv] = p
		}
		s.group = append(s.group, p-1)
		s.parts[p-1].Keys++
	}
	// A counting sort of the keys by part, stable, so that each part's
	// keys are written in the request's order without a search.
	at := 0
	for i := range s.parts {
		s.parts[i].first = at
		at += s.parts[i].Keys
		s.part[s.parts[i].Server] = 0 // ready for the next request
	}
	s.order = slices.Grow(s.order[:0], n)[:n]
	next := slices.Grow(s.cursor[:0], len(s.parts))[:len(s.parts)]
	for i := range s.parts {
		next[i] = s.parts[i].first
	}
	for k := range n {
		g := s.group[k]
		s.order[next[g]] = int32(k)
		next[g]++
	}
	s.cursor = next
}

// Parts returns the parts of the last split request. The slice is the
// Splitter's and changes with the next Split.
func (s *Splitter) Parts() []Part { return s.parts }

// PartOf returns the part key i of the request is in.
func (s *Splitter) PartOf(i int) int { return int(s.group[i]) }

// AppendPart appends the request of part i for its server: the command
// with the part's keys, in the order of the request.
func (s *Splitter) AppendPart(dst []byte, i int) []byte {
	p := s.parts[i]
	s.keys = s.keys[:0]
	for _, k := range s.order[p.first : p.first+p.Keys] {
		s.keys = append(s.keys, s.req.Keys[k])
	}
	dst = AppendRetrieval(dst, s.req.Cmd, s.req.Exptime, s.keys)
	clear(s.keys)
	return dst
}

// Begin starts reading back replies, the servers' replies to the parts in
// the order of [Splitter.Parts], with [Splitter.Value].
func (s *Splitter) Begin(replies []Reply) {
	s.replies = replies
	s.cursor = slices.Grow(s.cursor[:0], len(s.parts))[:len(s.parts)]
	clear(s.cursor)
}

// Value returns the VALUE entry (its line and data block) of key i in its
// part's reply, or nil when the reply holds none: a miss, or a part whose
// server failed or answered an error line. Call it for each key once, in
// the order of the request's keys, after [Splitter.Begin].
func (s *Splitter) Value(i int) []byte {
	p := s.group[i]
	r := &s.replies[p]
	c := s.cursor[p]
	if c >= len(r.Spans) {
		return nil
	}
	sp := r.Spans[c]
	if !bytes.Equal(r.Data[sp.KeyStart:sp.KeyEnd], s.req.Keys[i]) {
		return nil
	}
	s.cursor[p]++
	return r.Data[sp.Start:sp.End]
}
