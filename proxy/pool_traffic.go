package proxy

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco/sim/trace"
)

// A pool's sample of its traffic (its setting traffic, [Traffic]) is two
// things, both of bounded size and both cheap enough to keep on every
// request:
//
//   - the hottest keys by requests and by bytes, each a Space-Saving
//     summary (topKeys) fed one request in topEvery, chosen at random, so
//     that the request path takes the summaries' lock for a few requests
//     only; a key with more than 1/(topEvery*k) of the requests is never
//     missed, and its count is within the error the summary reports;
//   - a trace: the latest requests of the keys whose sampling hash falls
//     in key_share of the hash space, each key with all its requests or
//     none, as SHARDS samples a stream (trace.SampleHash, the hash kolco
//     plan samples by). A uniform sample of requests would thin each key's
//     requests alike, and a plan's estimate of the misses a change adds
//     rests on how often each key is asked again: a key's every request
//     must be in the trace or none.
//
// The trace's requests are kept in a ring of fixed slots whose key buffers
// are made at once, so that recording a request allocates nothing once a
// slot has held a key as long. Reads and their misses, as the clients saw
// them, are counted on every request, for a change's measured cost.

// topEvery is one request in how many the hot-key summaries count.
const topEvery = 8

// trafficSample is a pool's traffic sample.
type trafficSample struct {
	cfg Traffic
	// threshold is the largest sampling hash traced.
	threshold uint64
	start     time.Time
	// reads and misses are the reads the clients sent and those that
	// found nothing, as the clients saw them (a read a migration window
	// answered from the previous server is a hit).
	reads, misses atomic.Uint64

	mu      sync.Mutex // guards what follows
	ring    []tracedRequest
	next    int
	wrapped bool
	byReqs  *topKeys
	byBytes *topKeys
	// offered counts the requests offered to the summaries.
	offered uint64

	// change is the latest change the pool applied, predicted and
	// measured (see pool_traffic_change.go).
	change atomic.Pointer[changeWatch]
}

// tracedRequest is one request of the trace.
type tracedRequest struct {
	time   int64 // unix nanoseconds
	key    []byte
	size   int64 // the value's, -1 when unknown
	cmd    string
	op     trace.Op
	result trace.Result
}

// keySlot is the bytes of a key each slot of the trace keeps room for
// when it is made.
const keySlot = 32

// newTrafficSample returns the sample of a pool configured with cfg, or
// nil when the sample is off.
func newTrafficSample(cfg *PoolConfig) *trafficSample {
	c := cfg.WithDefaults().Traffic
	if !c.Enabled {
		return nil
	}
	t := &trafficSample{cfg: c, start: time.Now(), ring: make([]tracedRequest, c.Requests),
		byReqs: newTopKeys(c.TopKeys), byBytes: newTopKeys(c.TopKeys)}
	t.threshold = math.MaxUint64
	if c.KeyShare < 1 {
		t.threshold = uint64(c.KeyShare * (1 << 64))
	}
	arena := make([]byte, c.Requests*keySlot)
	for i := range t.ring {
		t.ring[i].key = arena[i*keySlot : i*keySlot : (i+1)*keySlot]
	}
	return t
}

// trafficNote is one key of a request, for the sample: the value's size
// (-1 when unknown) and what a read found.
type trafficNote struct {
	key    []byte
	size   int64
	result trace.Result
}

// record notes one key of a request that came at now (unix nanoseconds):
// cmd is the command's name, op what it does to the key.
func (t *trafficSample) record(now int64, key []byte, size int64, cmd string, op trace.Op, result trace.Result) {
	note := [1]trafficNote{{key: key, size: size, result: result}}
	t.recordAll(now, cmd, op, note[:])
}

// recordAll notes the keys of a request, taking the lock once for them
// all: a multi-key get costs one lock, not one a key.
func (t *trafficSample) recordAll(now int64, cmd string, op trace.Op, notes []trafficNote) {
	if op == trace.Read {
		misses := 0
		for i := range notes {
			if notes[i].result == trace.Miss {
				misses++
			}
		}
		t.reads.Add(uint64(len(notes)))
		if misses > 0 {
			t.misses.Add(uint64(misses))
		}
	}
	locked := false
	for i := range notes {
		n := &notes[i]
		// The hash is computed only when it decides: for a trace of a
		// share of the keys, or for the summaries, which key by it.
		counted := rand.Uint32N(topEvery) == 0
		traced := t.threshold == math.MaxUint64
		var h uint64
		if counted || !traced {
			h = trace.SampleHashBytes(n.key)
			traced = h <= t.threshold
		}
		if !traced && !counted {
			continue
		}
		if !locked {
			t.mu.Lock()
			locked = true
		}
		if counted {
			t.offered++
			t.byReqs.add(h, n.key, 1)
			if n.size > 0 {
				t.byBytes.add(h, n.key, uint64(n.size))
			}
		}
		if traced {
			r := &t.ring[t.next]
			r.time, r.size, r.cmd, r.op, r.result = now, n.size, cmd, op, n.result
			r.key = append(r.key[:0], n.key...)
			if t.next++; t.next == len(t.ring) {
				t.next, t.wrapped = 0, true
			}
		}
	}
	if locked {
		t.mu.Unlock()
	}
}

// requests returns the trace's requests, oldest first, as a reader of the
// trace reads them.
func (t *trafficSample) requests() []trace.Request {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, first := t.next, 0
	if t.wrapped {
		n, first = len(t.ring), t.next
	}
	out := make([]trace.Request, 0, n)
	for i := range n {
		r := &t.ring[(first+i)%len(t.ring)]
		out = append(out, trace.Request{Time: r.time, Key: string(r.key), Size: r.size, Command: r.cmd, Op: r.op, Result: r.result})
	}
	return out
}

// hot returns the hottest keys by requests and by bytes, and the requests
// the summaries were offered.
func (t *trafficSample) hot() (byReqs, byBytes []hotKey, offered uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byReqs.top(), t.byBytes.top(), t.offered
}

// leadingNumber returns the decimal number b starts with, or -1.
func leadingNumber(b []byte) int64 {
	n, digits := int64(0), 0
	for _, c := range b {
		if c < '0' || c > '9' || digits == 18 {
			break
		}
		n, digits = n*10+int64(c-'0'), digits+1
	}
	if digits == 0 {
		return -1
	}
	return n
}
