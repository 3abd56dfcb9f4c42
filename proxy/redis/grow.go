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

// growOwn is growFor for a buffer that grows while one value is read into
// it and nothing else reads it meanwhile (a request's arguments, before
// they are parsed): the buffer it outgrows, copied, is given back to the
// system at once (see dropPages) rather than held as garbage as large as
// the value until collected.
func growOwn(dst []byte, c, left int) []byte {
	grown := growFor(dst, c, left)
	if cap(dst) >= releaseMin && cap(grown) != cap(dst) {
		dropPages(dst[:cap(dst)])
	}
	return grown
}

// releaseMin is the smallest outgrown buffer whose memory is given back.
// Eight values of 100 MB read at once peaked at 1.4-1.9 GiB of RSS with
// their outgrown buffers kept until collected; 879-882 MiB with them
// given back and the last growth to the value's size (see Reader.readData).
const releaseMin = 1 << 20
