package faults

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"
)

// A cache's promise is weaker than a store's and easier to check. A read
// may miss - a cache loses values by design: evicted, on a server that
// restarted empty, on a server a change moved the key to - but what it
// returns is never older than a value acknowledged before the read began:
// a read that returns an old value the database has since replaced is the
// stale read a cache in front of a database must never serve. A write or
// delete whose outcome the client never learned (an error, a timeout) may
// take effect at any time, or never, so its value may be read at any time.
//
// Linearizability (porcupine) would ask more: that misses, too, fit one
// order. That is not what a cache promises, and a checker that accepted a
// miss anywhere would have to try every order of the writes around it; the
// rule here is checked in O(n log n) for a history of n requests.

// OpKind is what a request of a cache's history did.
type OpKind uint8

// The requests of a cache's history.
const (
	Set OpKind = iota + 1
	Delete
	Get
)

func (k OpKind) String() string {
	switch k {
	case Set:
		return "set"
	case Delete:
		return "delete"
	case Get:
		return "get"
	}
	return fmt.Sprintf("OpKind(%d)", k)
}

// CacheOp is one request of a cache's history, or one key of a get of
// several keys.
type CacheOp struct {
	Client int // the client that sent it
	Conn   int // the client's connection it went on, counted from 0
	Kind   OpKind
	Key    string
	// Value is a set's value, unique in the history, or the value a get
	// read.
	Value string
	// Found is set for a get that read a value; a get that missed has it
	// false.
	Found bool
	// Acked is set for a set or delete the server acknowledged (a delete
	// of a key it did not hold too). Without it the request failed or
	// timed out: it may take effect at any time, or never. A get is in
	// the history only when it was answered.
	Acked bool
	// Call and Return are when the request was sent and its reply read,
	// since the history began.
	Call, Return time.Duration
}

func (o CacheOp) String() string {
	s := fmt.Sprintf("client %d (conn %d) %s %s", o.Client, o.Conn, o.Kind, o.Key)
	switch {
	case o.Kind == Set:
		s += " " + o.Value
	case o.Kind == Get && o.Found:
		s += " -> " + o.Value
	case o.Kind == Get:
		s += " -> miss"
	}
	if o.Kind != Get && !o.Acked {
		s += " (outcome unknown)"
	}
	return fmt.Sprintf("%s [%.3fs..%.3fs]", s, o.Call.Seconds(), o.Return.Seconds())
}

// CacheModel checks a cache's history against its promise.
type CacheModel struct {
	// Lag is how long after its acknowledgement a write may still be
	// missing from a read on another connection: 0 for a pool read from
	// the servers that take its writes; a replica's allowed lag where
	// reads go to replicas. A read never lags a write of its own
	// connection.
	Lag time.Duration
}

// Violation is a read that broke the promise.
type Violation struct {
	Read CacheOp
	// Written is the set whose value the read returned, nil when no set
	// of the key wrote it.
	Written *CacheOp
	// Newer is the acknowledged set or delete the read returned a value
	// older than.
	Newer *CacheOp
	Why   Broken
}

// Broken is the way a read broke the promise.
type Broken uint8

// The ways a read breaks the promise.
const (
	// NoSuchSet: no set of the key wrote the value read.
	NoSuchSet Broken = iota + 1
	// BeforeSet: the value was read before its set was sent.
	BeforeSet
	// Stale: the value is older than one acknowledged before the read
	// began (by more than the model's lag).
	Stale
	// StaleOwn: the value is older than one its own connection's write
	// had acknowledged before the read began.
	StaleOwn
)

func (b Broken) String() string {
	switch b {
	case NoSuchSet:
		return "no set of the key wrote the value read"
	case BeforeSet:
		return "read before its set was sent"
	case Stale:
		return "older than a value acknowledged before the read began"
	case StaleOwn:
		return "older than a value its own connection's write had acknowledged"
	}
	return fmt.Sprintf("Broken(%d)", b)
}

func (v Violation) String() string {
	s := fmt.Sprintf("%s: %s", v.Read, v.Why)
	if v.Written != nil {
		s += "\n    written by " + v.Written.String()
	}
	if v.Newer != nil {
		s += "\n    older than " + v.Newer.String()
	}
	return s
}

// Check returns the reads of history that broke the promise, by key and
// time.
func (m CacheModel) Check(history []CacheOp) []Violation {
	byKey := map[string][]CacheOp{}
	for _, op := range history {
		byKey[op.Key] = append(byKey[op.Key], op)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []Violation
	for _, k := range keys {
		out = append(out, m.checkKey(byKey[k])...)
	}
	return out
}

// checkKey checks the requests of one key.
func (m CacheModel) checkKey(ops []CacheOp) []Violation {
	sets := map[string]*CacheOp{}
	all := &updates{}
	own := map[[2]int]*updates{}
	for i := range ops {
		op := &ops[i]
		if op.Kind == Set {
			sets[op.Value] = op
		}
		if op.Kind != Get && op.Acked {
			all.add(op)
			conn := [2]int{op.Client, op.Conn}
			if own[conn] == nil {
				own[conn] = &updates{}
			}
			own[conn].add(op)
		}
	}
	all.index()
	for _, u := range own {
		u.index()
	}
	var out []Violation
	for i := range ops {
		r := ops[i]
		if r.Kind != Get || !r.Found {
			continue
		}
		w := sets[r.Value]
		switch {
		case w == nil:
			out = append(out, Violation{Read: r, Why: NoSuchSet})
			continue
		case w.Call > r.Return:
			out = append(out, Violation{Read: r, Written: w, Why: BeforeSet})
			continue
		case !w.Acked:
			continue // may appear at any time
		}
		if n := all.newest(r.Call - m.Lag); n != nil && n.Call > w.Return {
			out = append(out, Violation{Read: r, Written: w, Newer: n, Why: Stale})
			continue
		}
		if u := own[[2]int{r.Client, r.Conn}]; m.Lag > 0 && u != nil {
			if n := u.newest(r.Call); n != nil && n.Call > w.Return {
				out = append(out, Violation{Read: r, Written: w, Newer: n, Why: StaleOwn})
			}
		}
	}
	return out
}

// updates are a key's acknowledged sets and deletes, by return time, with
// the latest-sent of each prefix.
type updates struct {
	ops    []*CacheOp
	latest []*CacheOp // latest[i]: of ops[:i+1], the one sent last
}

func (u *updates) add(op *CacheOp) { u.ops = append(u.ops, op) }

func (u *updates) index() {
	slices.SortStableFunc(u.ops, func(a, b *CacheOp) int { return cmp.Compare(a.Return, b.Return) })
	u.latest = make([]*CacheOp, len(u.ops))
	for i, op := range u.ops {
		u.latest[i] = op
		if i > 0 && u.latest[i-1].Call > op.Call {
			u.latest[i] = u.latest[i-1]
		}
	}
}

// newest returns, of the updates acknowledged before t, the one sent
// last, or nil.
func (u *updates) newest(t time.Duration) *CacheOp {
	n := sort.Search(len(u.ops), func(i int) bool { return u.ops[i].Return >= t })
	if n == 0 {
		return nil
	}
	return u.latest[n-1]
}
