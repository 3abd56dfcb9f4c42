// Package mrc estimates a cache's miss-ratio curve - its miss ratio
// against its memory - from a spatially hashed sample of its requests, so
// that a plan can say how many more reads a server will miss when a change
// gives it more keys for the same memory.
//
// # Sampling
//
// The sample (package sim/trace) holds every request of the keys whose
// hash falls under a threshold, a share R of the key space: SHARDS,
// Waldspurger, Park, Garthwaite and Ahmad, "Efficient MRC Construction with
// SHARDS" (FAST 2015). A cache of C bytes over the whole stream behaves as
// a cache of R*C bytes over the sample, so both policies below replay the
// sample at R times the size. Its error depends on the keys sampled, not
// on R: the fixed-size form keeps at most a set number of keys, lowering
// the threshold as keys arrive. SHARDS's adjustment counts the difference
// between the reads the sample should hold (R times the stream's) and
// those it holds as hits, since a hot key sampled or not is what tips it.
//
// # Policies
//
// [LRU] computes every size at once from reuse distances, in bytes: a
// read hits a cache of C bytes when the keys read since its last request,
// itself included, take at most C.
//
// memcached is not LRU: since 1.5 its LRU is segmented (HOT, WARM and
// COLD, an item moving to WARM when read twice), which keeps hot items
// through bursts of new ones. [Memcached] replays its policy on the
// sample - a miniature simulation, Waldspurger, Saemundsson, Ahmad and
// Park, "Cache Modeling and Optimization using Miniature Simulations"
// (USENIX ATC 2017) - with items in slab chunks as memcached stores them
// ([MemcachedFootprint]). Against memcached 1.6.18 at 2, 4 and 6 MiB
// (cmd/kolco's TestPlanPredictsMemcachedMissRatio) it predicted the
// measured miss ratio within 0.3 points from the whole trace, 1 from a
// sample of 2 000 keys, where LRU missed by up to 3.8. Its model leaves
// out what depends on time (items leaving HOT and WARM by age) and the
// per-class LRUs of mixed item sizes: one LRU over all classes.
package mrc
