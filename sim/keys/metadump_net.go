package keys

import (
	"context"

	"github.com/kolco-dev/kolco/internal/metadump"
	"github.com/kolco-dev/kolco/internal/redisscan"
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

// RedisOptions are how [RedisItems] reaches a server: AUTH's user and
// password (when the password is set) and the database to SELECT.
type RedisOptions struct {
	User, Password string
	DB             int
}

// RedisItems lists the keys of the Redis server at addr with SCAN, each
// with its size as MEMORY USAGE reports it (the value and the key's
// overhead in the server's memory). Exp is -1: a plan does not read TTLs.
// The error is the server's error reply, a reply it cannot read, the
// network's own, or ctx's when it ends first.
func RedisItems(ctx context.Context, addr string, o RedisOptions) ([]Item, error) {
	var items []Item
	err := redisscan.List(ctx, "tcp", addr, redisscan.Options{User: o.User, Password: o.Password, DB: o.DB},
		func(it redisscan.Item) error {
			items = append(items, Item{Key: it.Key, Size: it.Size, Exp: -1})
			return nil
		})
	if err != nil {
		return nil, err
	}
	return items, nil
}
