package redis

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"

	"github.com/kolco-dev/kolco/proxy/internal/wire"
)

// Limits bound what a [Reader] accepts from a client. Zero fields mean the
// defaults, which are redis-server 7.0's own, so that the proxy accepts
// what a server would.
type Limits struct {
	// MaxBulk is the longest argument, in bytes. Default 512 MiB, the
	// server's proto-max-bulk-len; a longer one gets the server's reply,
	// "invalid bulk length".
	MaxBulk int
	// MaxArgs is the most arguments of one request. Default 1<<20: the
	// server allows 2^31-1, but only 1<<20 before a client authenticates,
	// and a proxy should not hold more for one client.
	MaxArgs int
	// MaxRequest is the most bytes of one request as sent. Default 1 GiB,
	// the server's client-query-buffer-limit. It bounds what one client
	// connection holds in memory.
	MaxRequest int
	// MaxLine is the longest inline command, or length line, in bytes.
	// Default 64 KiB, the server's PROTO_INLINE_MAX_SIZE.
	MaxLine int
	// Budget, when not nil, is asked for room as a request's arguments
	// grow past their first 64 KiB; a request it has no room for is read
	// to its end and dropped, and gets an -OOM error wrapping
	// [ErrNoRoom]: the stream stays in step.
	Budget Budget
	// Unauthenticated applies, on top of the other limits, what
	// redis-server allows a client that has not yet authenticated when a
	// password is required: at most 1<<20 arguments and bulk strings of
	// 16 KiB, with the server's replies. A proxy with a password of its
	// own sets it until AUTH succeeds (see [Reader.SetLimits]).
	Unauthenticated bool
}

// Default limits.
const (
	DefaultMaxBulk    = 512 << 20
	DefaultMaxArgs    = 1 << 20
	DefaultMaxRequest = 1 << 30
	DefaultMaxLine    = 64 << 10
)

// redis-server's limits before authentication.
const (
	unauthMaxArgs = 1 << 20
	unauthMaxBulk = 16 << 10
)

func (l Limits) withDefaults() Limits {
	if l.MaxBulk <= 0 {
		l.MaxBulk = DefaultMaxBulk
	}
	if l.MaxArgs <= 0 {
		l.MaxArgs = DefaultMaxArgs
	}
	if l.MaxRequest <= 0 {
		l.MaxRequest = DefaultMaxRequest
	}
	if l.MaxLine <= 0 {
		l.MaxLine = DefaultMaxLine
	}
	return l
}

// The closing errors redis-server sends for malformed framing. Each is a
// fixed text, so one value serves every reader.
var (
	errMultibulkLen   = protocolError(ErrProtocol, "invalid multibulk length")
	errBulkLen        = protocolError(ErrProtocol, "invalid bulk length")
	errBulkTooLarge   = protocolError(ErrBulkTooLarge, "invalid bulk length")
	errUnauthArgs     = protocolError(ErrTooManyArgs, "unauthenticated multibulk length")
	errUnauthBulk     = protocolError(ErrBulkTooLarge, "unauthenticated bulk length")
	errBigMultibulk   = protocolError(ErrLineTooLong, "too big mbulk count string")
	errBigBulkLine    = protocolError(ErrLineTooLong, "too big bulk count string")
	errBigInline      = protocolError(ErrLineTooLong, "too big inline request")
	errUnbalanced     = protocolError(ErrProtocol, "unbalanced quotes in request")
	errCrossProtoHTTP = &Error{Err: ErrCrossProtocol, Close: true}
)

// Reader reads requests from a client stream, pipelined or not.
type Reader struct {
	wire.Input // Buffered, Unread, Wait
	br         *bufio.Reader
	lim        Limits
	line       []byte // an inline command longer than the bufio buffer
	used       int    // bytes of the current request read so far
	// charged is what the Budget gave the current request so far;
	// noRoom, the error of a request it had no room for.
	charged int
	noRoom  *Error

	tooManyArgs *Error // the replies naming this reader's limits
	tooLarge    *Error
}

// NewReader returns a Reader over r with the given limits.
func NewReader(r io.Reader, lim Limits) *Reader {
	br := bufio.NewReaderSize(r, 16<<10)
	rd := &Reader{Input: wire.NewInput(br), br: br}
	rd.SetLimits(lim)
	return rd
}

// SetLimits changes the limits for the requests read from now on, as a
// proxy does when a client authenticates.
func (r *Reader) SetLimits(lim Limits) {
	r.lim = lim.withDefaults()
	r.tooManyArgs = protocolError(ErrTooManyArgs, "more than "+strconv.Itoa(r.lim.MaxArgs)+" arguments")
	r.tooLarge = protocolError(ErrRequestTooLarge, "request larger than "+strconv.Itoa(r.lim.MaxRequest)+" bytes")
}

// Read reads the next request into req: its arguments, its command, its
// keys. At the end of the stream it returns io.EOF; a stream cut inside a
// request gives io.ErrUnexpectedEOF. Empty requests (a blank line, "*0")
// are skipped, as redis-server skips them. Errors in the request are
// [*Error] values: after one without Close set, the next request can be
// read.
func (r *Reader) Read(req *Request) error {
	for {
		req.reset()
		r.used, r.charged, r.noRoom = 0, 0, nil
		c, err := r.br.Peek(1)
		if err != nil {
			return err
		}
		var n int
		if c[0] == '*' {
			n, err = r.readArray(req)
		} else {
			req.Inline = true
			n, err = r.readInline(req)
		}
		if err != nil {
			return err
		}
		if n > 0 {
			req.finish()
			return resolve(req)
		}
	}
}

// readArray reads "*<n>\r\n" and n bulk strings, as redis-server's
// processMultibulkBuffer does, and returns the number of arguments.
func (r *Reader) readArray(req *Request) (int, error) {
	l, err := r.readLength(errBigMultibulk)
	n := l.n
	switch {
	case err != nil:
		return 0, err
	case !l.ok || n > math.MaxInt32:
		return 0, errMultibulkLen
	case n <= 0:
		return 0, nil
	case r.lim.Unauthenticated && n > unauthMaxArgs:
		return 0, errUnauthArgs
	case n > int64(r.lim.MaxArgs):
		return 0, r.tooManyArgs
	}
	for range n {
		if r.bufferedBulk(req) {
			continue
		}
		if err := r.readBulk(req); err != nil {
			return 0, err
		}
	}
	if r.noRoom != nil {
		return 0, r.noRoom
	}
	return int(n), nil
}

// lengthLine is a length line: its first byte and the number after it.
type lengthLine struct {
	kind byte
	n    int64
	ok   bool // n parsed
}

// readLength reads a length line, '*' or '$' and the number up to the
// first '\r', and the byte after the '\r' whatever it is: redis-server
// looks for '\r' alone and skips the next byte unread. It returns tooBig
// when no '\r' comes within MaxLine bytes. A NUL byte before the '\r' gives
// tooBig too: redis-server searches with strchr, never finds the '\r' and
// fails the same way once MaxLine bytes have come.
func (r *Reader) readLength(tooBig *Error) (lengthLine, error) {
	b, err := r.br.ReadSlice('\r')
	size := len(b)
	long := false
	for errors.Is(err, bufio.ErrBufferFull) {
		if size > r.lim.MaxLine || bytes.IndexByte(b, 0) >= 0 {
			return lengthLine{}, tooBig
		}
		long = true // over 16 KiB: no number is that long
		b, err = r.br.ReadSlice('\r')
		size += len(b)
	}
	if err != nil {
		return lengthLine{}, wire.Unexpected(err)
	}
	if size-1 > r.lim.MaxLine || bytes.IndexByte(b, 0) >= 0 {
		return lengthLine{}, tooBig
	}
	var l lengthLine
	if !long {
		// Parsed before the next read, which may move the buffer under b.
		// b is at least "\r"; a line of "\r" alone has kind '\r'.
		l.kind = b[0]
		if len(b) > 1 {
			l.n, l.ok = parseInt(b[1 : len(b)-1])
		}
	}
	if _, err := r.br.ReadByte(); err != nil {
		return lengthLine{}, wire.Unexpected(err)
	}
	r.used += size + 1
	if r.used > r.lim.MaxRequest {
		return lengthLine{}, r.tooLarge
	}
	return l, nil
}

// bufferedBulk reads in one step a bulk string that lies whole in the
// buffer with a plain length (no sign, no leading zero, at most nine
// digits), within the limits, which is what clients send. It reads
// nothing and reports false for anything else, left to readBulk, which
// reads it alike and answers what is wrong with it. It halves the cost of
// an argument.
func (r *Reader) bufferedBulk(req *Request) bool {
	b, _ := r.br.Peek(r.br.Buffered())
	if len(b) < 4 || b[0] != '$' {
		return false
	}
	n, i := 0, 1
	for ; i < len(b) && i <= 10 && '0' <= b[i] && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
	}
	// b[i] must be the '\r' ending one to nine digits, the first not a
	// zero unless it is the only one.
	if i == 1 || i > 10 || i >= len(b) || b[i] != '\r' || (b[1] == '0' && i > 2) || i > r.lim.MaxLine {
		return false
	}
	total := i + 2 + n + 2 // the line, its '\r' and the byte after, the data, two bytes
	if total > len(b) || n > r.lim.MaxBulk || (r.lim.Unauthenticated && n > unauthMaxBulk) || r.used+total > r.lim.MaxRequest ||
		(r.lim.Budget != nil && (r.noRoom != nil || len(req.buf)+n > r.charged+freeRequest)) {
		return false
	}
	req.buf = append(req.buf, b[i+2:i+2+n]...)
	req.endArg()
	r.used += total
	_, _ = r.br.Discard(total) // buffered: it cannot fail
	return true
}

// readBulk reads one "$<n>\r\n<n bytes>" argument into req, and the two
// bytes after it whatever they are, as redis-server does.
func (r *Reader) readBulk(req *Request) error {
	l, err := r.readLength(errBigBulkLine)
	switch {
	case err != nil:
		return err
	case l.kind != '$':
		return protocolError(ErrProtocol, "expected '$', got '"+string([]byte{l.kind})+"'")
	case !l.ok || l.n < 0:
		return errBulkLen
	case l.n > int64(r.lim.MaxBulk):
		return errBulkTooLarge
	case r.lim.Unauthenticated && l.n > unauthMaxBulk:
		return errUnauthBulk
	}
	n := int(l.n)
	if r.used+n+2 > r.lim.MaxRequest {
		return r.tooLarge
	}
	r.used += n + 2
	if err := r.readData(req, n); err != nil {
		return err
	}
	req.endArg()
	_, err = r.br.Discard(2)
	return wire.Unexpected(err)
}

// readData appends n bytes of the stream to req.buf, or drops them when
// the Budget has no room for the request. The Budget is asked for the
// whole argument at once, as a memcached data block is reserved: requests
// that each held part of their room while waiting for the rest could
// wait for each other until their timeouts. The buffer grows as the
// bytes come, by doubling, until an eighth of the argument has come, and
// then to the argument's whole size at once: it never holds more than
// eight times what has arrived, and the buffers it outgrew are given back
// to the system at once (see dropPages) rather than held as garbage until
// collected.
func (r *Reader) readData(req *Request, n int) error {
	if !r.reserveBulk(len(req.buf), n) {
		_, err := r.br.Discard(n) // the request is dropped
		return wire.Unexpected(err)
	}
	whole, from := n, len(req.buf)
	for n > 0 {
		c := min(n, bulkChunk)
		if n > KeepMax && len(req.buf)-from >= whole/8 && cap(req.buf)-len(req.buf) < n {
			// An eighth came: the rest is taken at the client's word,
			// in one buffer, rather than doubling through copies as
			// large as the value.
			req.buf = growOwn(req.buf, n+KeepMax, n+KeepMax)
		}
		req.buf = growOwn(req.buf, c, n)
		var err error
		if req.buf, err = appendFull(req.buf, r.br, c); err != nil {
			return err
		}
		n -= c
	}
	return nil
}

// readInline reads an inline command, a line split into arguments as
// redis-server's sdssplitargs splits it, and returns the number of
// arguments.
func (r *Reader) readInline(req *Request) (int, error) {
	line, err := r.readLine()
	if err != nil {
		return 0, err
	}
	r.used += len(line) + 1
	if r.used > r.lim.MaxRequest {
		return 0, r.tooLarge
	}
	n, ok := splitArgs(req, line)
	switch {
	case !ok:
		return 0, errUnbalanced
	case n > r.lim.MaxArgs:
		return 0, r.tooManyArgs
	}
	for i, start := 0, 0; i < n; i++ {
		if req.ends[i]-start > r.lim.MaxBulk {
			return 0, errBulkTooLarge
		}
		start = req.ends[i]
	}
	return n, nil
}

// readLine returns the next line without its \n and the \r before it, if
// any. The slice is valid until the next read. A line with a NUL byte is
// refused as too long: redis-server looks for the \n with strchr, never
// finds it and refuses the line once MaxLine bytes have come.
func (r *Reader) readLine() ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.line = append(r.line[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(r.line) > r.lim.MaxLine || bytes.IndexByte(b, 0) >= 0 {
				return nil, errBigInline
			}
			b, err = r.br.ReadSlice('\n')
			r.line = append(r.line, b...)
		}
		b = r.line
	}
	if err != nil {
		return nil, wire.Unexpected(err)
	}
	b = b[:len(b)-1]
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	if len(b) > r.lim.MaxLine || bytes.IndexByte(b, 0) >= 0 {
		return nil, errBigInline
	}
	return b, nil
}
