package mrc

import "github.com/kolco-dev/kolco/sim/trace"

// Footprint returns the bytes an item of a key of keyLen bytes and a
// value of valueLen bytes takes in a cache's memory.
type Footprint func(keyLen int, valueLen int64) float64

// PlainFootprint counts an item's key and value, nothing else: a cache
// whose memory limit counts the data alone.
func PlainFootprint(keyLen int, valueLen int64) float64 {
	return float64(max(int64(keyLen)+valueLen, 1))
}

// FromProfile returns the sampled stream of a trace's profile, restricted
// to the keys keep selects (all with a nil keep), such as the keys one
// server holds. Each request's item weighs footprint of its key and of
// its value: the request's size, or else the key's last known, or else
// the mean of the sizes the trace shows. Reads are Gets, writes Sets;
// the others neither read nor change a value and are left out. Gets is
// the reads of the selected keys in the whole trace; FillOnMiss is set
// when the trace has no writes, a cache's fills being then its clients'
// own, unseen.
func FromProfile(p *trace.Profile, footprint Footprint, keep func(key int32) bool) Stream {
	known, sum := 0, 0.0
	for _, k := range p.Keys {
		if k.Size >= 0 {
			known++
			sum += float64(k.Size)
		}
	}
	mean := int64(0)
	if known > 0 {
		mean = int64(sum / float64(known))
	}
	s := Stream{Rate: p.Sample.Rate, FillOnMiss: p.Writes == 0}
	for i, k := range p.Keys {
		if keep == nil || keep(int32(i)) {
			s.Gets += float64(k.Reads)
		}
	}
	for _, r := range p.Sample.Refs {
		if keep != nil && !keep(r.Key) {
			continue
		}
		var op Op
		switch r.Op {
		case trace.Read:
			op = Get
		case trace.Write:
			op = Set
		case trace.Delete:
			op = Delete
		default:
			continue
		}
		k := p.Keys[r.Key]
		size := r.Size
		if size < 0 {
			size = k.Size
		}
		if size < 0 {
			size = mean
		}
		keyLen := k.KeySize
		if keyLen == 0 {
			keyLen = len(k.Key)
		}
		s.Refs = append(s.Refs, Ref{Key: r.Key, Op: op, Size: footprint(keyLen, size)})
	}
	return s
}
