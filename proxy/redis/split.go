package redis

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/kolco-dev/kolco/proxy/internal/fragment"
)

// AnyServer is the server of a [Part] whose command touches no key: the
// caller sends it to any one server.
const AnyServer = -1

// Part is one request a [Splitter] sends to one server: Server is the
// index the caller's function gave for the part's keys, or AnyServer;
// Keys is the number of the client's keys in the part.
type Part = fragment.Part

// Splitter routes requests to servers: a single-key or same-server
// command to one server, a [ClassSplit] command (MGET, MSET, DEL, UNLINK,
// EXISTS, TOUCH) to one part per server whose replies [Splitter.Merge]
// makes into the client's reply, as nutcracker does. A Splitter is reused
// from request to request without allocating; it is not safe for
// concurrent use.
type Splitter struct {
	req *Request
	// g holds the parts, and for a ClassSplit command the request's key
	// groups (a key, or MSET's key and value) by part.
	g fragment.Groups
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
// [ClassRefused], [ClassTransaction], [ClassPubSub], [ClassBlocking] or [ClassEveryServer] command, [ErrLocal] for a [ClassLocal] one.
func (s *Splitter) Split(req *Request, server func(key []byte) int) error {
	s.req = req
	s.g.Parts = s.g.Parts[:0]
	cmd := req.Cmd
	switch cmd.class {
	case ClassSingle:
		s.g.Parts = append(s.g.Parts, Part{Server: server(req.Key(0)), Keys: 1})
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
		s.g.Parts = append(s.g.Parts, Part{Server: first, Keys: req.NumKeys()})
	case ClassAnyServer:
		s.g.Parts = append(s.g.Parts, Part{Server: AnyServer})
	case ClassSplit:
		s.g.Split(req.NumKeys(), func(i int) int { return server(req.Key(i)) })
	case ClassRefused, ClassTransaction, ClassPubSub, ClassBlocking, ClassEveryServer:
		return cmd.refused
	default:
		return errLocal
	}
	return nil
}

var errLocal = &Error{Err: ErrLocal, Reply: "-ERR the proxy answers this command itself\r\n"}

// Parts returns the parts of the last split request. The slice is the
// Splitter's and changes with the next Split.
func (s *Splitter) Parts() []Part { return s.g.Parts }

// AppendPart appends the request of part i for its server. A request in
// one part is sent whole; the parts of a split request carry their keys
// (with their values, for MSET) in the client's order.
func (s *Splitter) AppendPart(dst []byte, i int) []byte {
	req := s.req
	if len(s.g.Parts) == 1 {
		return AppendRequest(dst, req)
	}
	p := s.g.Parts[i]
	width := req.Cmd.step // MSET: a key and its value
	dst = AppendArrayHeader(dst, 1+p.Keys*width)
	dst = AppendBulkString(dst, req.Cmd.name)
	for _, g := range s.g.Keys(i) {
		at := req.KeyIndex(int(g))
		for _, a := range req.Args[at : at+width] {
			dst = AppendBulk(dst, a)
		}
	}
	return dst
}

// AppendPartRef is AppendPart with the part's largest argument passed on
// by reference rather than copied, when the part is the whole request and
// that argument has more than min bytes: head is dst with the request's
// encoding up to that argument's length line, data is the argument, in
// the Request's own memory, and rest is tail with the encoding of the
// arguments after it, which follows data and its "\r\n". Otherwise data
// is nil, head is AppendPart's and rest is tail emptied.
func (s *Splitter) AppendPartRef(dst, tail []byte, i, min int) (head, data, rest []byte) {
	req := s.req
	big := -1
	if len(s.g.Parts) == 1 {
		for j, a := range req.Args {
			if len(a) > min && (big < 0 || len(a) > len(req.Args[big])) {
				big = j
			}
		}
	}
	if big < 0 {
		return s.AppendPart(dst, i), nil, tail[:0]
	}
	dst = AppendArrayHeader(dst, len(req.Args))
	for _, a := range req.Args[:big] {
		dst = AppendBulk(dst, a)
	}
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(req.Args[big])), 10)
	dst = append(dst, '\r', '\n')
	rest = tail[:0]
	for _, a := range req.Args[big+1:] {
		rest = AppendBulk(rest, a)
	}
	return dst, req.Args[big], rest
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
	if len(replies) != len(s.g.Parts) {
		return dst, fmt.Errorf("%w: %d replies for %d parts", ErrBadReply, len(replies), len(s.g.Parts))
	}
	if len(s.g.Parts) == 1 {
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
		if len(r.Data) == 0 || r.Data[0] != '*' || len(r.Elems) != s.g.Parts[i].Keys {
			return dst, fmt.Errorf("%w: %q to a %s of %d keys", ErrBadReply, r.Data, s.req.Cmd.name, s.g.Parts[i].Keys)
		}
	}
	dst = AppendArrayHeader(dst, len(s.g.Group))
	for g := range s.g.Group {
		r := &replies[s.g.Group[g]]
		sp := r.Elems[s.g.Pos[g]]
		dst = append(dst, r.Data[sp.Start:sp.End]...)
	}
	return dst, nil
}
