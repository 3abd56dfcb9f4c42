package keys

import "github.com/kolco-dev/kolco/internal/metadump"

// Keys read from running memcached servers: "lru_crawler metadump all"
// lists every item a server holds (see package internal/metadump, which
// reads it for this package and for the proxy's sweep).

// The errors of [Metadump].
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
