package memcache

import (
	"bytes"
	"slices"

	"github.com/kolco-dev/kolco/proxy/internal/fragment"
)

// Part is one request a [Splitter] sends to one server: Server is the
// index the caller's function gave for the part's keys, Keys the number
// of the request's keys in the part.
type Part = fragment.Part

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
	req  *Request
	g    fragment.Groups
	keys [][]byte
	// The replies being read back, and a cursor into each part's spans.
	replies []Reply
	cursor  []int
}

// Split groups the keys of req, a retrieval, by server: server maps a key
// to the index of its server, from 0. Afterwards [Splitter.Parts] holds
// one part per server, in the order of their first key in the request.
func (s *Splitter) Split(req *Request, server func(key []byte) int) {
	s.req = req
	s.g.Split(len(req.Keys), func(i int) int { return server(req.Keys[i]) })
}

// Parts returns the parts of the last split request. The slice is the
// Splitter's and changes with the next Split.
func (s *Splitter) Parts() []Part { return s.g.Parts }

// PartOf returns the part key i of the request is in.
func (s *Splitter) PartOf(i int) int { return int(s.g.Group[i]) }

// AppendPart appends the request of part i for its server: the command
// with the part's keys, in the order of the request.
func (s *Splitter) AppendPart(dst []byte, i int) []byte {
	s.keys = s.keys[:0]
	for _, k := range s.g.Keys(i) {
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
	s.cursor = slices.Grow(s.cursor[:0], len(s.g.Parts))[:len(s.g.Parts)]
	clear(s.cursor)
}

// Value returns the VALUE entry (its line and data block) of key i in its
// part's reply, or nil when the reply holds none: a miss, or a part whose
// server failed or answered an error line. Call it for each key once, in
// the order of the request's keys, after [Splitter.Begin].
func (s *Splitter) Value(i int) []byte {
	p := s.g.Group[i]
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
