package keys

import (
	"context"

	"github.com/kolco-dev/kolco/internal/metadump"
)

// Metadump lists the items of the memcached server at addr with
// "lru_crawler metadump all" over its text protocol (memcached 1.4.31 and
// later, with the LRU crawler on, its default since 1.5). A server busy
// with another crawl is asked again, waiting longer each time, until ctx
// ends. The error wraps [ErrMetadump] for a reply it cannot read, [ErrBusy]
// when ctx ends while the server is still busy, or is the network's own,
// ctx's error when it ends first.
func Metadump(ctx context.Context, addr string) ([]Item, error) {
	var items []Item
	err := metadump.List(ctx, "tcp", addr, func(it metadump.Item) error {
		items = append(items, Item{Key: it.Key, Size: it.Size, Exp: it.Exp})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}
