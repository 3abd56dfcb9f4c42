// Package modulo places keys by hash(key) mod N, the baseline that
// consistent hashing replaces.
//
// It is here to be measured against: Karger et al., "Consistent Hashing and
// Random Trees: Distributed Caching Protocols for Relieving Hot Spots on the
// World Wide Web" (STOC 1997) was written because this scheme moves almost
// every key when N changes.
//
// # Lookup cost
//
// One hash and one modulo: O(1), no allocation. [Table.LocateN] is O(n).
//
// # Memory
//
// One int32 per slot plus the node set: the slot count is the sum of the
// rounded weights (N for equal weights), at most [MaxSlots].
//
// # Balance
//
// Ideal for equal weights: each node gets 1/N of the hash space, so the
// max/avg load differs from 1 only by sampling noise. The modulo uses every
// bit of the hash, so any hash of package keyhash serves: over 11 nodes and
// 200,000 keys (sampling noise alone is 0.7% of a node's load) the tests
// hold the largest load within 1.10 of the mean and the smallest above
// 0.90 under each.
//
// # Disruption
//
// Not minimal. Adding a node to N moves a key unless hash mod N equals
// hash mod N+1, i.e. about N/(N+1) of all keys (90.9% from 10 to 11 nodes);
// removing any node moves about the same share. The package tests measure
// and log both.
//
// # Weights
//
// By repetition: a node occupies [Repetitions](w) consecutive slots, its
// weight rounded to the nearest integer and at least 1. Integer weights are
// honoured exactly; fractional weights only as rounded (0.4 and 1.4 both
// count as 1, 1.5 as 2) - scale them to integers for finer ratios.
//
// # Replicas
//
// [Table.LocateN] returns the owner followed by the next nodes in ID
// order. Replicas are distinct, and n larger than the set returns every
// node once.
//
// # Arbitrary removal
//
// Any node can be removed; slots are rebuilt from the node set sorted by
// ID, so the placement depends only on the set (not on the order of adds),
// and every change reshuffles almost everything.
package modulo
