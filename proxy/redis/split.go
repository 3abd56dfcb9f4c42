package redis

import (
	"bytes"
	"fmt"
	"slices"
)

// AnyServer is the server of a [Part] whose command touches no key: the
// caller sends it to any one server.
const AnyServer = -1

// Part is one request a [Splitter] sends to one server.
type Part struct {
	// Server is the index the caller's function gave for the part's keys,
	// or AnyServer.
	Server int
	// Keys is the number of the client's keys in the part.
	Keys int

	first int // where the part's key groups start in Splitter.order
}

// Splitter routes requests to servers: a single-key or same-server
// command to one server, a [ClassSplit] command (MGET, MSET, DEL, UNLINK,
// EXISTS, TOUCH) to one part per server whose replies [Splitter.Merge]
// makes into the client's reply, as nutcracker does. A Splitter is reused
// from request to request without allocating; it is not safe for
// concurrent use.
type Splitter struct {
	req   *Request
	parts []Part
	group []int32 // for each key group of the request, its part
	pos   []int32 // and its place in the part
	order []int32 // key groups sorted by part, in the request's order within a part
	part  []int32 // server index -> part index + 1, 0 when none
}

// Split routes req, whose read succeeded, with server mapping a key (hash
// tag applied by the caller) to the index of its server in the pool, from
// 0 to the number of servers less one. Afterwards [Parts]
// holds one part per server the request goes to, in the order of their
// first key in the request.
//
// The error is an [*Error] to answer the client with: [ErrCrossServer] for
// a [ClassSameServer] command whose keys map to more than one server,
// [ErrNoKeys] for one with no key, [ErrUnsupported] for a
// [ClassRefused] command, [ErrLocal] for a [ClassLocal] one.
func (s *Splitter) Split(req *Request, server func(key []byte) int) error {
	s.req = req
	s.parts = s.parts[:0]
	cmd := req.Cmd
	switch cmd.class {
	case ClassSingle:
		s.parts = append(s.parts, Part{Server: server(req.Key(0)), Keys: 1})
	case ClassSameServer:
		if req.NumKeys() == 0 {
			return cmd.noKeys
		}
		first := server(req.Key(0))
		for i := 1; i < req.NumKeys(); i++ {
			if server(req.Key(i)) != first {
				return cmd.crossSrv
			}
		}
		s.parts = append(s.parts, Part{Server: first, Keys: req.NumKeys()})
	case ClassAnyServer:
		s.parts = append(s.parts, Part{Server: AnyServer})
	case ClassSplit:
		s.split(req, server)
	case ClassRefused:
		return cmd.refused
	default:
		return errLocal
	}
	return nil
}

var errLocal = &Error{Err: ErrLocal, Reply: "-ERR the proxy answers this command itself\r\n"}

// split groups a ClassSplit request's keys by server.
func (s *Splitter) split(req *Request, server func(key []byte) int) {
	n := req.NumKeys()
	s.group = s.group[:0]
	s.pos = s.pos[:0]
	for i := range n {
		srv := server(req.Key(i))
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
		s.pos = append(s.pos, int32(s.parts[p-1].Keys))
		s.parts[p-1].Keys++
	}
	// A counting sort of the key groups by part, so that each part's
	// keys can be written without a search.
	at := 0
	for i := range s.parts {
		s.parts[i].first = at
		at += s.parts[i].Keys
		s.part[s.parts[i].Server] = 0 // ready for the next request
	}
	s.order = slices.Grow(s.order[:0], n)[:n]
	for g := range n {
		p := &s.parts[s.group[g]]
		s.order[p.first+int(s.pos[g])] = int32(g)
	}
}

// Parts returns the parts of the last split request. The slice is the
// Splitter's and changes with the next Split.
func (s *Splitter) Parts() []Part { return s.parts }

// AppendPart appends the request of part i for its server. A request in
// one part is sent whole; the parts of a split request carry their keys
// (with their values, for MSET) in the client's order.
func (s *Splitter) AppendPart(dst []byte, i int) []byte {
	req := s.req
	if len(s.parts) == 1 {
		return AppendRequest(dst, req)
	}
	p := s.parts[i]
	width := req.Cmd.step // MSET: a key and its value
	dst = AppendArrayHeader(dst, 1+p.Keys*width)
	dst = AppendBulkString(dst, req.Cmd.name)
	for _, g := range s.order[p.first : p.first+p.Keys] {
		at := req.KeyIndex(int(g))
		for _, a := range req.Args[at : at+width] {
			dst = AppendBulk(dst, a)
		}
	}
	return dst
}

var okReply = []byte("+OK\r\n")

// Merge appends to dst the client's reply made of replies, the servers'
// replies to the parts in the order of [Parts]; a reply of one part is the
// client's reply as it is. A reply the caller could not get (the server
// is down) is given as an error reply, which becomes the client's reply
// as nutcracker makes it.
//
// MGET's arrays are merged in the order of the client's keys; MSET's
// answer is +OK when every part's is; the integers of DEL, UNLINK, EXISTS
// and TOUCH are summed. When a part's reply is an error, the client gets
// the first such error, in the order of the client's keys. A reply of the
// wrong type or size gives an error wrapping [ErrBadReply], dst unchanged.
func (s *Splitter) Merge(dst []byte, replies []Reply) ([]byte, error) {
	if len(replies) != len(s.parts) {
		return dst, fmt.Errorf("%w: %d replies for %d parts", ErrBadReply, len(replies), len(s.parts))
	}
	if len(s.parts) == 1 {
		return append(dst, replies[0].Data...), nil
	}
	for _, r := range replies {
		if IsError(r.Data) {
			return append(dst, r.Data...), nil
		}
	}
	switch s.req.Cmd.merge {
	case MergeArray:
		return s.mergeArrays(dst, replies)
	case MergeOK:
		for _, r := range replies {
			if !bytes.Equal(r.Data, okReply) {
				return dst, fmt.Errorf("%w: %q to %s", ErrBadReply, r.Data, s.req.Cmd.name)
			}
		}
		return append(dst, okReply...), nil
	}
	var sum int64
	for _, r := range replies {
		n, ok := Integer(r.Data)
		if !ok {
			return dst, fmt.Errorf("%w: %q to %s", ErrBadReply, r.Data, s.req.Cmd.name)
		}
		sum += n
	}
	return AppendInt(dst, sum), nil
}

// mergeArrays appends MGET's array: each key's element from its part's
// reply, in the client's order.
func (s *Splitter) mergeArrays(dst []byte, replies []Reply) ([]byte, error) {
	for i, r := range replies {
		if len(r.Data) == 0 || r.Data[0] != '*' || len(r.Elems) != s.parts[i].Keys {
			return dst, fmt.Errorf("%w: %q to a %s of %d keys", ErrBadReply, r.Data, s.req.Cmd.name, s.parts[i].Keys)
		}
	}
	dst = AppendArrayHeader(dst, len(s.group))
	for g := range s.group {
		r := &replies[s.group[g]]
		sp := r.Elems[s.pos[g]]
		dst = append(dst, r.Data[sp.Start:sp.End]...)
	}
	return dst, nil
}
