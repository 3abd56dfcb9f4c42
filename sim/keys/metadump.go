package keys

import (
	"bufio"
	"errors"
	"io"

	"github.com/kolco-dev/kolco/internal/metadump"
)

// Keys read from running memcached servers: "lru_crawler metadump all"
// lists every item a server holds (see package internal/metadump, which
// reads it for this package and for the proxy's sweep).

// The errors of [ParseMetadumpLine], [ReadMetadump] and [Metadump].
var (
	// ErrMetadump is wrapped by every error about a metadump reply: a
	// malformed line, or a reply other than the dump, such as the
	// server's "CLIENT_ERROR lru crawler disabled".
	ErrMetadump = metadump.ErrBad
	// ErrBusy is returned for a server busy with another crawl
	// ("BUSY currently processing crawler request"); a later request may
	// succeed.
	ErrBusy = metadump.ErrBusy
)

// Item is one item a memcached server holds.
type Item struct {
	// Key is the item's key, decoded.
	Key string
	// Size is the bytes the item takes in the server's memory.
	Size int64
	// Exp is the item's expiry as a Unix time; -1 means none.
	Exp int64
}

// maxMetadumpLine bounds one line of a dump.
const maxMetadumpLine = metadump.MaxLine

// ParseMetadumpLine reads one line of a metadump, without its line end.
// Fields are name=value pairs separated by spaces; key and size are
// needed, exp is read when present (else -1), the others are ignored. The
// error wraps [ErrMetadump].
func ParseMetadumpLine(line []byte) (Item, error) {
	it, err := metadump.ParseLine(line)
	return Item{Key: it.Key, Size: it.Size, Exp: it.Exp}, err
}

// ReadMetadump reads one reply to "lru_crawler metadump": item lines up
// to the line "END". The error is [ErrBusy] when the server is busy with
// another crawl; it wraps [ErrMetadump] for a malformed line, a line
// longer than memcached writes, or any other one-line reply (the server's
// own error, such as "CLIENT_ERROR lru crawler disabled"); else it is r's
// own, io.ErrUnexpectedEOF for a reply cut short.
func ReadMetadump(r *bufio.Reader) ([]Item, error) {
	var items []Item
	mr := metadump.NewReader(r)
	for {
		it, err := mr.Next()
		if errors.Is(err, io.EOF) {
			return items, nil
		}
		if err != nil {
			return nil, err
		}
		items = append(items, Item{Key: it.Key, Size: it.Size, Exp: it.Exp})
	}
}

// FromItems returns the keys of items with their sizes, each key once:
// where servers hold copies of one key, the first item listed counts.
func FromItems(items []Item) *Set {
	seen := make(map[string]bool, len(items))
	var (
		names []string
		sizes []float64
	)
	for _, it := range items {
		if seen[it.Key] {
			continue
		}
		seen[it.Key] = true
		names, sizes = append(names, it.Key), append(sizes, float64(it.Size))
	}
	ks := List(names)
	ks.Sizes = sizes
	return ks
}
