// Package jumpback places keys with JumpBackHash, and removes any node with
// MementoHash.
//
// [Bucket] implements Otmar Ertl, "JumpBackHash: Say Goodbye to the Modulo
// Operation to Distribute Keys Uniformly to Buckets" (Software: Practice and
// Experience, 2025; arXiv:2403.18682, 2024): the same mapping properties as
// jump hash (package jump), computed with integer operations and a
// SplitMix64 generator seeded with the key, in O(1) expected time instead of
// O(ln n). Its output equals that of hash4j's
// ConsistentHashing.jumpBackHashSplitMix64(), the implementation released
// with the paper (the tests check vectors produced by it). [Placement] adds node names and arbitrary removals with the
// replacement table of Coluzzi et al., "MementoHash: A Stateful, Minimal
// Memory, Best Performing Consistent Hash Algorithm" (IEEE/ACM Transactions
// on Networking, 2024; arXiv:2306.09783), exactly as package jump does
// over jump hash.
//
// The bucket numbers differ from jump hash's (a different random process
// gives the same distribution), so the two packages place keys differently.
// The package's benchmark BenchmarkBucket runs both bucket functions side
// by side; JumpBackHash is the faster at every size measured.
//
// # Lookup cost
//
// O(1) expected for [Bucket]: about two generator steps. A lookup on
// [Placement] adds the replacement-table walk of package jump. No lookup
// allocates.
//
// # Memory
//
// [Bucket] needs none; [Placement] keeps per bucket the node and two int32s.
//
// # Balance
//
// Ideal: every bucket is equally likely (max/avg differs from 1 only by
// sampling noise), and removed buckets' keys spread evenly. SplitMix64
// mixes any key hash first: under every hash of package keyhash, over 11
// nodes and 200,000 keys (sampling noise alone is 0.7% of a node's load),
// the tests hold the largest load within 1.10 of the mean and the smallest
// above 0.90.
//
// # Disruption
//
// Minimal on add and on the removal of any node.
//
// # Weights
//
// Not supported: a weight other than 1 (0 reads as 1) is rejected with an
// error wrapping kolco.ErrBadWeight.
//
// # Replicas
//
// Placement.LocateN returns the owner, then the node that would own the
// key if the owner were removed, and so on; distinct, prefix-stable, every
// node once for n above the node count.
//
// # Arbitrary removal and history
//
// As in package jump: any node can be removed, nodes are tied to buckets
// ([New] in ID order, adds take the most recently removed bucket, the last
// bucket goes by shrinking the array while none is removed), the placement
// depends on the history of changes, not only on the final set, and undoing
// a change (removing the node just added, or adding back the one just
// removed) restores every key.
package jumpback
