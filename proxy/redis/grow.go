package redis

import (
	"bufio"
	"io"
	"slices"

	"github.com/kolco-dev/kolco/proxy/internal/wire"
)

// bulkChunk is the most a buffer grows by before the bytes have arrived:
// a peer that announces a 512 MiB bulk string and sends nothing costs 64
// KiB, not 512 MiB.
const bulkChunk = 64 << 10

// appendFull appends the next n bytes of br to dst, growing dst as the
// bytes come rather than by n at once.
func appendFull(dst []byte, br *bufio.Reader, n int) ([]byte, error) {
	for n > 0 {
		c := min(n, bulkChunk)
		off := len(dst)
		dst = growFor(dst, c, n)[:off+c]
		if _, err := io.ReadFull(br, dst[off:]); err != nil {
			return dst[:off], wire.Unexpected(err)
		}
		n -= c
	}
	return dst, nil
}

// growFor returns dst with room for c more bytes, of left still to come
// (c <= left): when it must grow, by as much again as it holds, at most
// left, so that a large value is copied a few times as it grows rather
// than at every chunk, and its buffer never holds more than twice what
// has arrived.
func growFor(dst []byte, c, left int) []byte {
	if cap(dst)-len(dst) >= c {
		return dst
	}
	return slices.Grow(dst, min(left, max(len(dst), c)))
}
