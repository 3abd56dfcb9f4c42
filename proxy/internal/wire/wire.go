// Package wire holds what memcached's and Redis's protocols share on the
// wire, for the proxy's codecs of them (proxy/memcache, proxy/redis):
// decimal numbers, data blocks ended by "\r\n", and a stream that ends
// in the middle of one.
package wire

import (
	"bufio"
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
