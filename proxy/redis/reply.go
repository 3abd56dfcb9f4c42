package redis

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/kolco-dev/kolco/proxy/internal/wire"
)

// Span locates one element of an array reply: bytes Start:End of the
// reply, the element's header to its last \r\n.
type Span struct {
	Start, End int
}

// Reply is one server reply: its bytes and, when it is an array, where
// each of its elements lies.
type Reply struct {
	Data  []byte
	Elems []Span
}

// ReplyLimits bound what a [ReplyReader] accepts from a server. Zero
// fields mean the defaults.
type ReplyLimits struct {
	// MaxBulk is the longest bulk string. Default 512 MiB, the most a
	// redis-server value can hold.
	MaxBulk int
	// MaxReply is the most bytes of one reply. Default 1 GiB.
	MaxReply int
	// MaxDepth is the deepest nesting of arrays. Default 64: redis
	// commands nest a few levels (COMMAND DOCS, XINFO STREAM FULL); only a
	// script's reply nests deeper.
	MaxDepth int
	// RESP3 accepts the types of RESP3 as well, which a server sends on
	// a connection that asked for them with HELLO 3: null, booleans,
	// doubles, big numbers, verbatim strings, blob errors, maps, sets
	// and pushes. Attributes, which redis-server never sends, are
	// refused.
	RESP3 bool
}

// Default reply limits.
const (
	DefaultMaxReplyBulk = 512 << 20
	DefaultMaxReply     = 1 << 30
	DefaultMaxDepth     = 64
)

func (l ReplyLimits) withDefaults() ReplyLimits {
	if l.MaxBulk <= 0 {
		l.MaxBulk = DefaultMaxReplyBulk
	}
	if l.MaxReply <= 0 {
		l.MaxReply = DefaultMaxReply
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	return l
}

// ReplyReader reads RESP2 replies from a server: simple strings, errors,
// integers, bulk strings, nil, arrays nested to any depth within the
// limit; and with [ReplyLimits.RESP3] the types of RESP3 too, a map's
// keys and values each an element of it (see Read).
type ReplyReader struct {
	// Budget, when not nil, is asked for room for each bulk string
	// before it is held; one it has no room for is dropped with its
	// reply, and Read returns an error wrapping [ErrNoRoom]. It may be
	// changed between replies.
	Budget Budget

	br    *bufio.Reader
	lim   ReplyLimits
	stack []int // elements left to read in each open array, the current one included
	// noRoom is the Budget's refusal of the bulk string bufferedBulk
	// left to the general path.
	noRoom error
}

// NewReplyReader returns a ReplyReader over r with the given limits.
func NewReplyReader(r io.Reader, lim ReplyLimits) *ReplyReader {
	return &ReplyReader{br: bufio.NewReaderSize(r, 16<<10), lim: lim.withDefaults()}
}

// Wait blocks until the next reply has begun to arrive (or is buffered
// already), and returns the read error if it cannot.
func (r *ReplyReader) Wait() error {
	_, err := r.br.Peek(1)
	return err
}

// Buffered returns the number of bytes that can be read without blocking.
func (r *ReplyReader) Buffered() int { return r.br.Buffered() }

// Read appends to dst the next whole reply and returns it; when the reply
// is an array (or a RESP3 map, set or push) it also appends to elems where
// each of its elements lies, counted from the start of this reply
// (len(dst) on entry); a map of n pairs has 2n elements, key and value in
// turn. Arrays are
// read with a loop and an explicit stack, never recursion.
//
// Bytes that are not a RESP2 reply give an error wrapping [ErrBadReply];
// after it the stream is out of step. A reply over the limits is read to
// its end and dropped, dst and elems coming back as they were, with an
// error wrapping [ErrReplyTooLarge] or [ErrReplyTooDeep], as is one whose
// bulk string the Budget has no room for ([ErrNoRoom]): the stream stays
// in step. At the end of the stream Read returns io.EOF; a stream cut
// inside a reply gives io.ErrUnexpectedEOF.
func (r *ReplyReader) Read(dst []byte, elems []Span) ([]byte, []Span, error) {
	base, ebase := len(dst), len(elems)
	st := r.stack[:0]
	defer func() { r.stack = st[:0] }()
	topStart := 0
	for {
		if len(st) == 1 {
			topStart = len(dst)
		}
		// Each element's Span counts against MaxReply as well, so that
		// an array of a billion one-byte elements cannot cost gigabytes
		// of spans.
		used := base - spanCost*(len(elems)-ebase)
		var h header
		var err error
		dst, h, err = r.element(dst, used)
		switch {
		case err == io.EOF && len(st) > 0:
			return dst[:base], elems[:ebase], io.ErrUnexpectedEOF
		case err != nil:
			return dst[:base], elems[:ebase], err
		case h.over && h.noRoom != nil:
			return r.drop(dst[:base], elems[:ebase], st, h, fmt.Errorf("%w: %w", ErrNoRoom, h.noRoom))
		case h.over:
			return r.drop(dst[:base], elems[:ebase], st, h, ErrReplyTooLarge)
		case aggregate(h.kind) && h.n > 0:
			if len(st) >= r.lim.MaxDepth {
				return r.drop(dst[:base], elems[:ebase], st, h, ErrReplyTooDeep)
			}
			st = append(st, int(h.n))
			continue
		}
		// An element is complete: count it in its array, and close every
		// array it completes.
		for len(st) > 0 {
			if len(st) == 1 {
				elems = append(elems, Span{topStart - base, len(dst) - base})
			}
			st[len(st)-1]--
			if st[len(st)-1] > 0 {
				break
			}
			st = st[:len(st)-1]
		}
		if len(st) == 0 {
			return dst, elems, nil
		}
	}
}

// element appends the next element: a bulk string whole in the buffer in
// one step, else its header line and, for a bulk string, its data. For an
// array it reads only the header. h.over says the element passes the
// limits; what is left of it is unread.
func (r *ReplyReader) element(dst []byte, used int) ([]byte, header, error) {
	r.noRoom = nil
	if d, n, ok := r.bufferedBulk(dst, used); ok {
		return d, header{kind: '$', n: n}, nil
	}
	dst, h, err := r.header(dst, used)
	if err != nil || h.over || !blob(h.kind) || h.n < 0 {
		return dst, h, err
	}
	if h.n > int64(r.lim.MaxBulk) || int64(len(dst)-used)+h.n+2 > int64(r.lim.MaxReply) {
		h.over = true
		return dst, h, nil
	}
	if err := r.reserve(int(h.n)); err != nil {
		h.over, h.noRoom = true, err
		return dst, h, nil
	}
	dst, err = r.bulk(dst, int(h.n))
	return dst, h, err
}

// bufferedBulk appends in one step a bulk string that lies whole in the
// buffer with a plain length (no sign, no leading zero, at most nine
// digits) within the limits: what servers send. It reads nothing and
// reports false for anything else, left to the general path, which reads
// it alike.
func (r *ReplyReader) bufferedBulk(dst []byte, used int) ([]byte, int64, bool) {
	b, _ := r.br.Peek(r.br.Buffered())
	if len(b) < 5 || b[0] != '$' {
		return dst, 0, false
	}
	n, i := 0, 1
	for ; i < len(b) && i <= 10 && '0' <= b[i] && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
	}
	total := i + 2 + n + 2
	if i == 1 || i > 10 || (b[1] == '0' && i > 2) || total > len(b) || b[i] != '\r' || b[i+1] != '\n' ||
		b[total-2] != '\r' || b[total-1] != '\n' || n > r.lim.MaxBulk || len(dst)-used+total > r.lim.MaxReply {
		return dst, 0, false
	}
	if r.Budget != nil {
		if err := r.Budget.Reserve(n); err != nil {
			r.noRoom = err // the general path drops it
			return dst, 0, false
		}
	}
	dst = append(dst, b[:total]...)
	_, _ = r.br.Discard(total) // buffered: it cannot fail
	return dst, int64(n), true
}

// spanCost is what one Span costs, in bytes of MaxReply.
const spanCost = 16

// header is a reply's first line: its type byte and, for integers, bulk
// strings and arrays, its number.
type header struct {
	kind byte
	n    int64
	over bool // the reply passes MaxReply with this line
	// noRoom, with over, is the Budget's refusal of a bulk string.
	noRoom error
}

// header appends the next line with its \r\n to dst and parses it;
// len(dst)-base is what the reply holds so far.
func (r *ReplyReader) header(dst []byte, base int) ([]byte, header, error) {
	start := len(dst)
	for {
		b, err := r.br.ReadSlice('\n')
		// A line that passes MaxReply is read whole while it is short
		// enough to be a length, so that drop knows what follows it.
		if len(dst)-base+len(b) > r.lim.MaxReply && len(dst)-start+len(b) > maxLengthLine {
			return r.dropLine(dst, start, b, err)
		}
		dst = append(dst, b...)
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if len(dst) == start && err == io.EOF {
				return dst, header{}, io.EOF // Read decides: a clean end or a cut
			}
			return dst, header{}, wire.Unexpected(err)
		}
	}
	line := dst[start:]
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return dst, header{}, fmt.Errorf("%w: %q", ErrBadReply, line)
	}
	h, ok := parseHeader(line[:len(line)-2], r.lim.RESP3)
	if !ok {
		return dst, header{}, fmt.Errorf("%w: %q", ErrBadReply, line)
	}
	h.over = len(dst)-base > r.lim.MaxReply
	return dst, h, nil
}

// maxLengthLine is longer than any length line, ":-9223372036854775808\r\n".
const maxLengthLine = 64

// dropLine reads and drops the rest of a line that passes MaxReply, b being
// its part just read (with err). Only a simple string or an error can be
// that long.
func (r *ReplyReader) dropLine(dst []byte, start int, b []byte, err error) ([]byte, header, error) {
	kind := byte(0)
	if len(dst) > start {
		kind = dst[start]
	} else if len(b) > 0 {
		kind = b[0]
	}
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = r.br.ReadSlice('\n')
	}
	switch {
	case err != nil:
		return dst[:start], header{}, wire.Unexpected(err)
	case kind != '+' && kind != '-':
		return dst[:start], header{}, fmt.Errorf("%w: a line of over %d bytes", ErrBadReply, r.lim.MaxReply)
	}
	return dst[:start], header{kind: kind, over: true}, nil
}

// parseHeader parses a reply line without its \r\n, RESP3's types too
// when resp3 is set.
func parseHeader(line []byte, resp3 bool) (header, bool) {
	h := header{kind: line[0]}
	switch h.kind {
	case '+', '-':
		return h, true
	case ':', '$', '*':
		n, ok := parseInt(line[1:])
		if !ok || (h.kind != ':' && (n < -1 || n > math.MaxInt32)) {
			return h, false
		}
		h.n = n
		return h, true
	}
	if !resp3 {
		return h, false
	}
	switch h.kind {
	case '_':
		return h, len(line) == 1
	case '#':
		return h, len(line) == 2 && (line[1] == 't' || line[1] == 'f')
	case ',', '(':
		// A double ("1.5", "inf", "nan", "-1e+30") or a big number: the
		// client reads it; the proxy only needs its line.
		return h, len(line) > 1
	case '=', '!', '~', '>', '%':
		n, ok := parseInt(line[1:])
		if !ok || n < 0 || n > math.MaxInt32/2 {
			return h, false
		}
		h.n = n
		if h.kind == '%' {
			h.n = 2 * n // a key and a value each pair
		}
		return h, true
	}
	return h, false // '|', an attribute, and anything else
}

// blob reports whether kind is a type whose length line is followed by
// that many bytes: a bulk string, a RESP3 verbatim string or blob error.
func blob(kind byte) bool { return kind == '$' || kind == '=' || kind == '!' }

// aggregate reports whether kind is a type whose length line is followed
// by that many elements: an array, a RESP3 map (its header's n counted
// in elements), set or push.
func aggregate(kind byte) bool {
	return kind == '*' || kind == '%' || kind == '~' || kind == '>'
}

// bulk appends an n-byte bulk string's data and its \r\n, growing dst as
// the bytes come rather than by n at once.
func (r *ReplyReader) bulk(dst []byte, n int) ([]byte, error) {
	dst, err := appendFull(dst, r.br, n+2)
	if err != nil {
		return dst, err
	}
	if dst[len(dst)-2] != '\r' || dst[len(dst)-1] != '\n' {
		return dst, fmt.Errorf("%w: a bulk string not followed by \\r\\n", ErrBadReply)
	}
	return dst, nil
}

// drop reads the rest of a reply over the limits without keeping it: the
// element h begun (a bulk string's data, an array's elements), then the
// elements left in each open array.
func (r *ReplyReader) drop(dst []byte, elems []Span, st []int, h header, cause error) ([]byte, []Span, error) {
	var left int64
	for _, n := range st {
		left += int64(n) - 1
	}
	switch {
	case blob(h.kind):
		if err := r.discardBulk(h.n); err != nil {
			return dst, elems, err
		}
	case aggregate(h.kind) && h.n > 0:
		left += h.n
	}
	if err := r.skip(left); err != nil {
		return dst, elems, err
	}
	if errors.Is(cause, ErrNoRoom) {
		return dst, elems, cause
	}
	return dst, elems, fmt.Errorf("%w (limits: %d bytes, bulk strings of %d, depth %d)",
		cause, r.lim.MaxReply, r.lim.MaxBulk, r.lim.MaxDepth)
}

// skip reads and drops n whole elements, counting without a stack: each
// array adds its elements to the count.
func (r *ReplyReader) skip(n int64) error {
	for ; n > 0; n-- {
		b, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if err := r.skipLongLine(b[0]); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return wire.Unexpected(err)
		}
		if len(b) < 3 || b[len(b)-2] != '\r' {
			return fmt.Errorf("%w: %q", ErrBadReply, b)
		}
		h, ok := parseHeader(b[:len(b)-2], r.lim.RESP3)
		switch {
		case !ok:
			return fmt.Errorf("%w: %q", ErrBadReply, b)
		case blob(h.kind):
			if err := r.discardBulk(h.n); err != nil {
				return err
			}
		case aggregate(h.kind) && h.n > 0:
			n += h.n
		}
	}
	return nil
}

// skipLongLine drops the rest of a line longer than the buffer, whose
// first byte was kind: only a simple string or an error is that long.
func (r *ReplyReader) skipLongLine(kind byte) error {
	if kind != '+' && kind != '-' {
		return fmt.Errorf("%w: a long %q line", ErrBadReply, kind)
	}
	for {
		_, err := r.br.ReadSlice('\n')
		if err == nil {
			return nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return wire.Unexpected(err)
		}
	}
}

// discardBulk drops an n-byte bulk string's data and its \r\n; n < 0 is
// the nil bulk string, with no data.
func (r *ReplyReader) discardBulk(n int64) error {
	if n < 0 {
		return nil
	}
	ended, err := wire.SkipBlock(r.br, int(n))
	if err == nil && !ended {
		err = fmt.Errorf("%w: a bulk string not followed by \\r\\n", ErrBadReply)
	}
	return err
}

// IsError reports whether reply is an error reply.
func IsError(reply []byte) bool { return len(reply) > 0 && reply[0] == '-' }

// Integer returns the value of an integer reply, ":n\r\n".
func Integer(reply []byte) (int64, bool) {
	if len(reply) < 4 || reply[0] != ':' || reply[len(reply)-2] != '\r' || reply[len(reply)-1] != '\n' {
		return 0, false
	}
	return parseInt(reply[1 : len(reply)-2])
}

// Bulk returns the data of a bulk string reply, "$n\r\n...\r\n"; isNil is
// set for the nil reply, "$-1\r\n". ok is false for any other reply.
func Bulk(reply []byte) (data []byte, isNil, ok bool) {
	if string(reply) == "$-1\r\n" {
		return nil, true, true
	}
	i := bytes.Index(reply, []byte("\r\n"))
	if i < 2 || reply[0] != '$' {
		return nil, false, false
	}
	n, ok := parseInt(reply[1:i])
	if !ok || n < 0 || int64(len(reply)) != int64(i)+2+n+2 || string(reply[len(reply)-2:]) != "\r\n" {
		return nil, false, false
	}
	return reply[i+2 : len(reply)-2], false, true
}
