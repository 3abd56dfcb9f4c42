package trace

import (
	"errors"
	"fmt"
	"io"
)

// ErrEmpty is returned by Summarize for a trace without a request.
var ErrEmpty = errors.New("trace: no requests")

// Profile is a trace summed up key by key, with a sample of its stream.
type Profile struct {
	// Start and End are the times of the first and the last request, in
	// nanoseconds (Request.Time).
	Start, End int64
	// Requests counts the requests, Reads, Writes and Deletes those of
	// each operation, the others being Requests less these.
	Requests, Reads, Writes, Deletes int64
	// Hits and Misses count the reads whose result the trace says.
	Hits, Misses int64
	// Keys holds each key's figures, in the order the trace first names
	// them.
	Keys []KeyStats
	// Stats is the reader's account of what it left out.
	Stats Stats
	// Sample is a spatially hashed sample of the stream.
	Sample Sample
}

// KeyStats is what a trace asked of one key.
type KeyStats struct {
	// Key is the key; KeySize its length in the traffic (see
	// Request.KeySize).
	Key     string
	KeySize int
	// Requests counts the requests naming the key, Reads those that
	// read it, Hits and Misses the reads whose result the trace says.
	Requests, Reads, Hits, Misses int64
	// Size is the value's last size the trace showed, -1 if none did.
	Size int64
}

// Seconds returns the time the trace spans, End - Start, in seconds.
func (p *Profile) Seconds() float64 { return float64(p.End-p.Start) / 1e9 }

// Results reports whether the trace says what its reads found: whether
// some read is known to be a hit or a miss.
func (p *Profile) Results() bool { return p.Hits+p.Misses > 0 }

// Options configure Summarize.
type Options struct {
	// SampleKeys bounds the keys the sample follows (fixed-size SHARDS):
	// the sample holds the keys of the least sampling hashes, at most
	// this many. Zero means DefaultSampleKeys.
	SampleKeys int
}

// DefaultSampleKeys is the sample's default size in keys. SHARDS's
// error shrinks with the keys sampled, not with the share of the trace
// they are: 4 096 keys of a Zipf trace gave miss ratios within a point of
// the whole trace's (package sim/mrc's TestSampledCurve). A plan draws
// each server's curve from the keys of the sample that server holds, so
// the default leaves some 26 000 to each of ten servers; it costs a few
// MB and a replay of its share of the trace's requests.
const DefaultSampleKeys = 1 << 18

// Summarize reads r to its end into a Profile. The error wraps ErrEmpty
// for a trace without requests, or is r's own.
func Summarize(r Reader, o Options) (*Profile, error) {
	if o.SampleKeys < 0 {
		return nil, fmt.Errorf("trace: the sample's size must be >= 0 keys (got %d)", o.SampleKeys)
	}
	if o.SampleKeys == 0 {
		o.SampleKeys = DefaultSampleKeys
	}
	p := &Profile{}
	index := map[string]int32{}
	s := newSampler(o.SampleKeys)
	for {
		req, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		i, ok := index[req.Key]
		if !ok {
			if len(p.Keys) == 1<<31-1 {
				return nil, fmt.Errorf("trace: more than %d keys", 1<<31-1)
			}
			i = int32(len(p.Keys))
			index[req.Key] = i
			p.Keys = append(p.Keys, KeyStats{Key: req.Key, KeySize: req.KeySize, Size: -1})
			s.addKey(req.Key)
		}
		p.add(req, &p.Keys[i])
		s.add(i, req)
	}
	if p.Requests == 0 {
		return nil, ErrEmpty
	}
	p.Stats = r.Stats()
	p.Sample = s.sample(p.Requests)
	return p, nil
}

// add counts one request of the key k.
func (p *Profile) add(req Request, k *KeyStats) {
	if p.Requests == 0 || req.Time < p.Start {
		p.Start = req.Time
	}
	p.End = max(p.End, req.Time)
	p.Requests++
	k.Requests++
	if req.KeySize > 0 {
		k.KeySize = req.KeySize
	}
	if req.Size >= 0 {
		k.Size = req.Size
	}
	switch req.Op {
	case Read:
		p.Reads++
		k.Reads++
	case Write:
		p.Writes++
	case Delete:
		p.Deletes++
	}
	switch req.Result {
	case Hit:
		p.Hits++
		k.Hits++
	case Miss:
		p.Misses++
		k.Misses++
	}
}
