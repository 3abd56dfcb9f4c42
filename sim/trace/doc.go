// Package trace reads what a cache or a store was asked: a request stream of
// (time, key, size, command, hit or miss where known), from the captures
// people already have - redis-cli MONITOR output, memcached's watch stream,
// the Twitter cache-trace CSV of Yang, Yue and Rashmi ("A large scale
// analysis of hundreds of in-memory cache clusters at Twitter", OSDI 2020)
// - and from kolco's own trace format, which the proxy writes.
//
// # The request stream
//
// Every format is read by a [Reader] into [Request]s in the order the
// server saw them; a command naming several keys (MGET, MSET, DEL) is one
// request per key. What a format does not say is marked unknown: MONITOR
// and the Twitter traces carry no hit or miss, memcached's watch stream no
// size of a miss. An error about the input wraps [ErrBadTrace] and names
// the line; no input makes a reader panic or loop.
//
// # Formats
//
//   - kolco: kolco's own, one request a line under a versioned header (see
//     docs/trace.md; [Writer] writes it).
//   - monitor: what redis-cli MONITOR prints: `1700000000.123456 [0
//     127.0.0.1:50000] "get" "user:1"`. Commands that scripts run (the
//     "lua" lines) are left out, their EVAL counted by its keys instead, as
//     a proxy sees them; commands that name no key (PING, INFO) are counted
//     in [Stats.Keyless].
//   - watch: memcached 1.6's `watch fetchers mutations` stream:
//     `ts=1700000000.123456 gid=7 type=item_get key=user%3A1 status=found
//     clsid=1 cfd=21 size=3`. memcached logs a fetch inside every store, so
//     a fetch followed on its connection by a store of the same key is read
//     as the store alone; lines are put back in gid order, as memcached's
//     protocol.txt says to.
//   - twitter: the Twitter cache-trace CSV: timestamp (seconds), anonymized
//     key, key size, value size, client id, operation, TTL.
//
// [Detect] tells the formats apart by their first lines.
//
// # Profile
//
// [Summarize] reads a stream once into a [Profile]: each key's requests,
// reads, writes, hits and misses, its last known size, and the span of
// time the stream covers - what a plan needs for request rates - and a
// spatially hashed sample of the stream for miss-ratio curves (package
// sim/mrc): SHARDS, Waldspurger, Park, Garthwaite and Ahmad, "Efficient
// MRC Construction with SHARDS" (FAST 2015), in its fixed-size form.
package trace
