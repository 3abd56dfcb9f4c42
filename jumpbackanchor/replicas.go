package jumpbackanchor

import "github.com/kolco-dev/kolco/internal/jumpbackhash"

// failover is the bucket set as removing a key's owners found so far, in
// order, would leave it, seen without copying it: each removal goes by the
// rule buckets.remove applies, a shrink of the set or an entry on the
// stack, and the entries live beside the set's own. It answers what
// LocateN asks: the owner once the owners before it are removed.
type failover struct {
	s       *buckets
	size    int     // the set's size after the shrinks
	removed int     // buckets on the stack, the set's and the simulated
	extra   []moved // the simulated removals that went on the stack
}

// moved is a simulated removal that went on the stack.
type moved struct {
	b int
	e entry
}

// entryOf returns bucket b's entry after the simulated removals. Few
// owners are asked for, so a scan of them costs less than a copy of the
// set's entries.
func (f *failover) entryOf(b int) entry {
	for _, m := range f.extra {
		if m.b == b {
			return m.e
		}
	}
	return f.s.entryOf(b)
}

// view is buckets.view after the simulated removals.
func (f *failover) view(b int, v uint32) int {
	for b < f.size {
		e := f.entryOf(b)
		if e.a < v {
			break
		}
		b += int(e.dk)
	}
	return b
}

// bucket is buckets.bucket after the simulated removals.
func (f *failover) bucket(kh uint64) int {
	if f.size <= 1 {
		return 0
	}
	b32, g := jumpbackhash.Bucket(kh, uint32(f.size))
	b := int(b32)
	for {
		a := f.entryOf(b).a
		if a == 0 {
			return b
		}
		var x uint32
		x, g = jumpbackhash.Uniform(g, a)
		b = f.view(int(x), a)
	}
}

// remove simulates buckets.remove of working bucket b, which is never
// the last working one (LocateN stops before it would remove that): it
// shrinks the set, or returns the removal that goes on the stack for the
// caller to append to extra. (Appending here, through the pointer, would
// make the escape analysis move LocateN's fixed array to the heap.)
func (f *failover) remove(b int) (m moved, stacked bool) {
	if b == f.size-1 && f.removed == 0 {
		f.size--
		return moved{}, false
	}
	f.removed++
	n := f.size - f.removed
	h := f.view(n, uint32(n)+1)
	return moved{b: b, e: entry{a: uint32(n), dk: int32(h - b)}}, true
}
