package memcache

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/kolco-dev/kolco/proxy/internal/wire"
)

// Span locates one VALUE entry inside a retrieval reply: Key is the key's
// position and Start:End the whole entry, header line to the data block's
// \r\n inclusive.
type Span struct {
	KeyStart, KeyEnd int
	Start, End       int
}

// ReplyReader reads server replies.
type ReplyReader struct {
	// Budget, when not nil, is asked for room before each value is read
	// into memory; a value it refuses is read and dropped, and Read
	// returns an error wrapping [ErrNoRoom] once the whole reply is read.
	Budget Budget

	br     *bufio.Reader
	maxVal int
}

// NewReplyReader returns a ReplyReader over r that accepts values of up to
// maxValue bytes (0 means [DefaultMaxValue]).
func NewReplyReader(r io.Reader, maxValue int) *ReplyReader {
	if maxValue <= 0 {
		maxValue = DefaultMaxValue
	}
	return &ReplyReader{br: bufio.NewReaderSize(r, 16<<10), maxVal: maxValue}
}

// Buffered returns the number of bytes that can be read without blocking.
func (r *ReplyReader) Buffered() int { return r.br.Buffered() }

// Wait blocks until the next reply has begun to arrive (or is buffered
// already), and returns the read error if it cannot.
func (r *ReplyReader) Wait() error {
	_, err := r.br.Peek(1)
	return err
}

// Read appends to dst the whole reply to a request with command cmd and
// returns it; for a retrieval it also appends to spans the position of each
// VALUE entry, counted from the start of this reply (len(dst) on entry); the
// END line is part of the reply but of no span. A reply that does not parse gives an error
// wrapping [ErrBadReply]; after it the stream is out of step. A value over
// the limit, or one the Budget refuses, is read and dropped, and the whole
// reply read, before an error wrapping [ErrValueTooLarge] or [ErrNoRoom]:
// the stream stays in step ([Dropped] reports such an error).
func (r *ReplyReader) Read(dst []byte, cmd Command, spans []Span) ([]byte, []Span, error) {
	base := len(dst)
	var dropped error
	for {
		start := len(dst)
		var err error
		dst, err = r.appendLine(dst)
		if err != nil {
			return dst, spans, err
		}
		line := dst[start:]
		switch {
		case cmd.IsRetrieval() && bytes.HasPrefix(line, []byte("VALUE ")):
			var sp Span
			dst, sp, err = r.value(dst, start)
			switch {
			case Dropped(err):
				dropped = err
				dst = dst[:start]
			case err != nil:
				return dst, spans, err
			default:
				spans = append(spans, Span{sp.KeyStart - base, sp.KeyEnd - base, sp.Start - base, sp.End - base})
			}
			continue
		case (cmd == CmdMetaGet || cmd == CmdMetaArithmetic) && bytes.HasPrefix(line, []byte("VA ")):
			dst, err = r.metaValue(dst, start)
			return dst, spans, err
		case cmd == CmdStats && bytes.HasPrefix(line, []byte("STAT ")):
			continue
		}
		if len(line) < 3 || cmd.IsRetrieval() && !bytes.Equal(line, []byte("END\r\n")) && !IsErrorReply(line) {
			return dst, spans, fmt.Errorf("%w: %q", ErrBadReply, line)
		}
		return dst, spans, dropped
	}
}

// noRoomError is a value the Budget refused: it is [ErrNoRoom], and says
// the size and the Budget's reason.
type noRoomError struct {
	n   uint64
	err error
}

func (e *noRoomError) Error() string   { return fmt.Sprintf("a value of %d bytes: %v", e.n, e.err) }
func (e *noRoomError) Unwrap() []error { return []error{ErrNoRoom, e.err} }

// Dropped reports whether err is a [ReplyReader.Read] error for a value
// read and dropped, after which the stream is still in step.
func Dropped(err error) bool {
	return errors.Is(err, ErrValueTooLarge) || errors.Is(err, ErrNoRoom)
}

// appendLine appends the next line with its \r\n.
func (r *ReplyReader) appendLine(dst []byte) ([]byte, error) {
	for {
		b, err := r.br.ReadSlice('\n')
		dst = append(dst, b...)
		if err == nil {
			if !bytes.HasSuffix(dst, []byte("\r\n")) {
				return dst, fmt.Errorf("%w: line without \\r\\n", ErrBadReply)
			}
			return dst, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return dst, wire.Unexpected(err)
		}
		if len(dst) > 1<<20 {
			return dst, fmt.Errorf("%w: line too long", ErrBadReply)
		}
	}
}

// value parses the VALUE line at dst[start:] and appends its data block.
func (r *ReplyReader) value(dst []byte, start int) ([]byte, Span, error) {
	line := dst[start : len(dst)-2]
	var fa [5][]byte
	f := fields(fa[:0], line[len("VALUE "):])
	if len(f) < 3 || len(f) > 4 {
		return dst, Span{}, fmt.Errorf("%w: %q", ErrBadReply, line)
	}
	n, ok := wire.ParseUint(f[2])
	if !ok || n > math.MaxInt32 {
		return dst, Span{}, fmt.Errorf("%w: %q", ErrBadReply, line)
	}
	if err := r.admit(n); err != nil {
		return dst, Span{}, err
	}
	ks := start + len("VALUE ") + bytes.Index(line[len("VALUE "):], f[0])
	sp := Span{KeyStart: ks, KeyEnd: ks + len(f[0]), Start: start}
	dst, err := r.appendData(dst, int(n))
	sp.End = len(dst)
	return dst, sp, err
}

// metaValue parses "VA size flags*" at dst[start:] and appends its data.
func (r *ReplyReader) metaValue(dst []byte, start int) ([]byte, error) {
	line := dst[start : len(dst)-2]
	var fa [2][]byte
	f := fields(fa[:0], line[len("VA "):])
	if len(f) < 1 {
		return dst, fmt.Errorf("%w: %q", ErrBadReply, line)
	}
	n, ok := wire.ParseUint(f[0])
	if !ok || n > math.MaxInt32 {
		return dst, fmt.Errorf("%w: %q", ErrBadReply, line)
	}
	if err := r.admit(n); err != nil {
		return dst[:start], err
	}
	return r.appendData(dst, int(n))
}

// admit returns nil for a value of n bytes that may be read into memory;
// else it reads and drops the value and its \r\n and returns why, or the
// read error.
func (r *ReplyReader) admit(n uint64) error {
	var why error
	switch {
	case n > uint64(r.maxVal):
		why = fmt.Errorf("%w: a value of %d bytes, over max_value_size %d", ErrValueTooLarge, n, r.maxVal)
	case r.Budget != nil:
		if err := r.Budget.Reserve(int(n)); err != nil {
			why = &noRoomError{n: n, err: err}
		}
	}
	if why == nil {
		return nil
	}
	if ended, err := wire.SkipBlock(r.br, int(n)); !ended {
		if err == nil {
			err = fmt.Errorf("%w: bad data chunk", ErrBadReply)
		}
		return err
	}
	return why
}

func (r *ReplyReader) appendData(dst []byte, n int) ([]byte, error) {
	off := len(dst)
	dst = slices.Grow(dst, n+2)[:off+n+2]
	if _, err := io.ReadFull(r.br, dst[off:]); err != nil {
		return dst, wire.Unexpected(err)
	}
	if dst[len(dst)-2] != '\r' || dst[len(dst)-1] != '\n' {
		return dst, fmt.Errorf("%w: bad data chunk", ErrBadReply)
	}
	return dst, nil
}

// IsErrorReply reports whether reply is ERROR, CLIENT_ERROR or SERVER_ERROR.
func IsErrorReply(reply []byte) bool {
	return bytes.HasPrefix(reply, []byte("ERROR")) ||
		bytes.HasPrefix(reply, []byte("CLIENT_ERROR")) ||
		bytes.HasPrefix(reply, []byte("SERVER_ERROR"))
}

// fields appends to dst the space-separated fields of line, at most
// cap(dst)+1 of them (the last one then holds the rest), without allocating
// when dst has room.
func fields(dst [][]byte, line []byte) [][]byte {
	for len(line) > 0 {
		i := bytes.IndexByte(line, ' ')
		if i < 0 {
			return append(dst, line)
		}
		if i > 0 {
			if len(dst) == cap(dst)-1 {
				return append(dst, line)
			}
			dst = append(dst, line[:i])
		}
		line = line[i+1:]
	}
	return dst
}
