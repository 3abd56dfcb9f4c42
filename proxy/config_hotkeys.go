package proxy

import (
	"fmt"
	"strings"
	"time"
)

// HotKeys configures a pool's hot-key cache (hot_keys): the proxy answers
// reads of its hottest keys - those its traffic sample follows, which
// therefore must be on - from a small cache of its own, so that a key read
// more than its server can serve, or than its share of the pool's load,
// does not make that server the pool's hottest (see pool_hotkeys.go).
//
//   - memcached: a get of one key is answered from a value the proxy read
//     at most Staleness before; a write of the key through this proxy
//     drops its value at once, as a flush_all drops all, while writes
//     through other proxies or to the servers directly are seen once the
//     value is Staleness old.
//   - Redis: a GET is answered from a value the server's CLIENT TRACKING
//     invalidates, and only once the server has confirmed, on the
//     connection its invalidations come on, that none was on the way
//     when the read came: reads stay linearizable, whoever writes. A
//     server that does not support tracking (before Redis 6) keeps its
//     keys uncached, and the start logs that.
//
// Off by default: it changes what a read costs, not what it returns, only
// where a pool is skewed enough to want it, and a memcached pool's reads
// may then be up to Staleness behind another writer.
type HotKeys struct {
	// Enabled (enabled) turns the cache on.
	Enabled bool `yaml:"enabled"`
	// Size (size) is how many of the hottest keys by requests are cached:
	// at most, and by default, traffic.top_keys.
	Size int `yaml:"size"`
	// Staleness (staleness), in milliseconds, is the oldest a value a
	// memcached pool answers from the cache may be. Default 100: a hot
	// key's server then sees about ten reads of it a second from each
	// proxy, whatever its clients ask. A Redis pool's values are
	// invalidated by its servers, and it sets none.
	Staleness int `yaml:"staleness"`
}

// maxHotStaleness bounds staleness: a minute.
const maxHotStaleness = 60000

// hotStalenessDefault is a memcached pool's staleness when it sets none.
const hotStalenessDefault = 100

// staleness returns how long a memcached pool's cached value is answered:
// Staleness, or its default when unset.
func (h HotKeys) staleness() time.Duration {
	if h.Staleness == 0 {
		return hotStalenessDefault * time.Millisecond
	}
	return time.Duration(h.Staleness) * time.Millisecond
}

// size returns how many keys are cached in a pool whose sample follows
// top keys: Size, or top when unset.
func (h HotKeys) size(top int) int {
	if h.Size == 0 {
		return top
	}
	return h.Size
}

// check checks hot_keys, the setting of pool p: the combinations it
// cannot serve rightly are refused, each saying why.
func (h HotKeys) check(p *PoolConfig, bad badSetting) error {
	switch {
	case h.Size < 0:
		return bad("hot_keys.size", "must not be negative (got %d)", h.Size)
	case h.Staleness < 0 || h.Staleness > maxHotStaleness:
		return bad("hot_keys.staleness", "want 1 to %d ms (got %d)", maxHotStaleness, h.Staleness)
	case !h.Enabled:
		return nil
	case !p.Traffic.Enabled:
		return bad("hot_keys.enabled", "the cache holds the hottest keys the traffic sample finds: set traffic: {enabled: true}")
	case h.Size > p.Traffic.TopKeys:
		return bad("hot_keys.size", "the cache holds keys the traffic sample follows: want at most traffic.top_keys, %d (got %d)", p.Traffic.TopKeys, h.Size)
	case p.Redis && h.Staleness > 0:
		return bad("hot_keys.staleness", "a Redis pool's cached values are invalidated by its servers' CLIENT TRACKING, never stale: leave staleness unset")
	case p.ReplicaReads.Enabled:
		return bad("hot_keys.enabled", "replica reads answer a read as a replica holds it, the cache as the primary does: a client would read a key forward and back; use one or the other")
	}
	return nil
}

// explain writes what the hot-key cache of pool p does, when on.
func (h HotKeys) explain(b *strings.Builder, p *PoolConfig) {
	switch {
	case !h.Enabled:
		// Nothing: the explanation of a pool without it stays as it was.
	case p.Redis:
		fmt.Fprintf(b, "  hot keys: GETs of the %d hottest keys answered by the proxy, invalidated by the servers' CLIENT TRACKING and confirmed with each server before a value is answered (linearizable); off for a server without tracking and while a change moves keys\n", h.size(p.Traffic.TopKeys))
	default:
		fmt.Fprintf(b, "  hot keys: gets of the %d hottest keys answered by the proxy from values at most %d ms old, dropped at once by a write through this proxy; off while a change moves keys\n", h.size(p.Traffic.TopKeys), h.staleness().Milliseconds())
	}
}
