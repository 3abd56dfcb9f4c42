package proxy

import (
	"context"
	"fmt"
	"math/rand/v2"
)

// A change's keys and bytes that move, measured: when it is applied, the
// pool lists the keys each server before it holds (the front's listKeys:
// memcached's lru_crawler metadump, Redis's SCAN), on a connection of its
// own, one server after another, and counts those the server owned before
// that the change gives another server - the keys it re-homes - with
// their keys' and values' bytes. That is what "moved" means whether the
// change is cold or warm: a cold change leaves each of them behind on its
// old server, to be missed at its new one and filled again (the misses
// added count those the clients asked for); a warm change copies to the
// new server those read in its window (CopiedKeys) and leaves the rest
// behind too. The prediction counts the same keys in the trace: those it
// shows, over its key share.
//
// The listing is off the request path and bounded: memcached's crawler
// walks its items in a thread of its own, and the pool reads each line
// once and hashes its key twice; the values' lengths are asked (mg <key>
// s) of at most movedSizesAsked keys a server, a uniform sample of its
// moved keys whose mean stands for the others'. It must end within the
// change's window, or the keys are reported as not measured. A store's
// keys are moved by its mover, whose own figures (the pool's move) count
// them.

// movedSizesAsked bounds the moved keys of one server whose values'
// lengths a change asks.
const movedSizesAsked = 4096

// movedCount is what listing the servers at a change found: the keys the
// change re-homes and their bytes (keys' and values'), and why either is
// not measured or is estimated (note).
type movedCount struct {
	keys, bytes float64
	note        string
}

// countMoved lists, through f, the keys each server of before holds, and
// counts those it owns under before and after gives another server.
func countMoved(ctx context.Context, f front, before, after *placement) movedCount {
	var mc movedCount
	sized, sampled := true, false
	for _, b := range before.servers {
		n, sample, err := listMoved(ctx, f, b, before, after)
		if err != nil {
			return movedCount{note: fmt.Sprintf("keys not measured: listing %s: %v", b.name(), err)}
		}
		mc.keys += float64(n)
		if n == 0 || !sized {
			continue
		}
		sampled = sampled || n > len(sample)
		sizes, err := f.sizes(ctx, b, sample)
		if err != nil {
			return movedCount{keys: mc.keys, note: fmt.Sprintf("bytes not measured: asking %s the values' lengths: %v", b.name(), err)}
		}
		if sizes == nil {
			sized = false
			continue
		}
		var sum float64
		held := 0
		for i, s := range sizes {
			if s >= 0 { // else dropped since it was listed
				sum += float64(len(sample[i])) + float64(s)
				held++
			}
		}
		if held > 0 {
			mc.bytes += float64(n) * sum / float64(held)
		}
	}
	switch {
	case !sized:
		mc.bytes, mc.note = 0, "bytes not measured: the servers do not tell a value's length"
	case sampled:
		mc.note = fmt.Sprintf("bytes estimated from the values' lengths of at most %d moved keys a server", movedSizesAsked)
	}
	return mc
}

// listMoved lists b's keys and returns how many of them b owns under
// before and after gives another server, and a uniform sample of at most
// movedSizesAsked of those (a reservoir).
func listMoved(ctx context.Context, f front, b *backend, before, after *placement) (int, []string, error) {
	name := b.name()
	var sample []string
	n := 0
	err := f.listKeys(ctx, b, func(key string) error {
		k := []byte(key)
		if before.owner(k) != name || after.owner(k) == name {
			return nil
		}
		n++
		if len(sample) < movedSizesAsked {
			sample = append(sample, key)
		} else if i := rand.IntN(n); i < movedSizesAsked {
			sample[i] = key
		}
		return nil
	})
	return n, sample, err
}
