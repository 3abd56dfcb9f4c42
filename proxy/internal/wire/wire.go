// Package wire holds what memcached's and Redis's protocols share on the
// wire, for the proxy's codecs of them (proxy/memcache, proxy/redis):
// decimal numbers, data blocks ended by "\r\n", a stream that ends in
// the middle of one, and the buffered stream of a client's requests.
package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
)

// ParseUint parses b as a decimal uint64: digits only, no sign, not
// empty, within uint64.
func ParseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// Unexpected returns err, with io.EOF made io.ErrUnexpectedEOF: for a
// stream that ends where more of a request or reply was due.
func Unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// SkipBlock reads past a data block of n bytes and the "\r\n" that must
// follow it; ended is false when something else follows. The error is
// the read's, made [Unexpected].
func SkipBlock(br *bufio.Reader, n int) (ended bool, err error) {
	if _, err := br.Discard(n); err != nil {
		return false, Unexpected(err)
	}
	var crlf [2]byte
	if _, err := io.ReadFull(br, crlf[:]); err != nil {
		return false, Unexpected(err)
	}
	return crlf == [2]byte{'\r', '\n'}, nil
}

// Input is the buffered stream a codec reads a client's requests from,
// and what it says of the bytes buffered and not yet read as requests.
type Input struct{ br *bufio.Reader }

// NewInput returns the Input of br.
func NewInput(br *bufio.Reader) Input { return Input{br} }

// Buffered returns the number of bytes that can be read without blocking:
// more than zero when the client pipelined another request.
func (in Input) Buffered() int { return in.br.Buffered() }

// Unread returns a copy of what was read from the stream and not yet read
// as requests: what the client sent after the last request read, for the
// process its connection is handed to.
func (in Input) Unread() []byte {
	b, _ := in.br.Peek(in.br.Buffered())
	return bytes.Clone(b)
}

// Wait blocks until the next request has begun to arrive (or is buffered
// already), and returns the read error if it cannot. It reads nothing, so
// that after an error - a deadline that fired while the client was idle -
// the stream is still in step.
func (in Input) Wait() error {
	_, err := in.br.Peek(1)
	return err
}
