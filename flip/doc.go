// Package flip places keys with FlipHash, and removes any node with
// MementoHash.
//
// [Bucket] implements Charles Masson and Homin K. Lee, "FlipHash: A
// Constant-Time Consistent Range-Hashing Algorithm" (arXiv:2402.17549,
// 2024). Its output equals that of fliphash_64 in the authors' Rust crate
// (github.com/DataDog/fliphash-rs, version 0.1.0, released with the
// paper), hash family included: the tests check 112 values printed by the
// crate and a digest of a million more. [Placement] adds node names and
// arbitrary removals with the replacement table of Coluzzi et al.,
// "MementoHash: A Stateful, Minimal Memory, Best Performing Consistent
// Hash Algorithm" (IEEE/ACM Transactions on Networking, 2024;
// arXiv:2306.09783), exactly as packages jump and jumpback do.
//
// FlipHash hashes a key into the smallest power-of-two range holding the
// buckets: the highest set bit of the masked key hash stays, and the bits
// below it are flipped by a second hash indexed by that bit, so that
// doubling the range only ever moves a key into the new top half. A key
// that lands past the last bucket draws again in the top half until a draw
// falls on a bucket or into the lower half, where it takes its place in
// the half-size range.
//
// # Lookup cost
//
// O(1): two hashes of a few multiplications for most keys, and fewer
// than two more draws on average for the rest, at most 64 (the crate's
// bound; reaching it has probability below 2^-64). A lookup on
// [Placement] adds the replacement-table walk of package jump, short while
// few nodes are removed. No lookup allocates. The tables of
// docs/algorithms.md give measured times beside jump, jumpback, anchor and
// maglev.
//
// # Memory
//
// [Bucket] needs none; [Placement] keeps per bucket the node and two
// int32s of MementoHash's table.
//
// # Balance
//
// Ideal: every bucket is equally likely (max/avg differs from 1 only by
// sampling noise), and removed buckets' keys spread evenly. FlipHash
// hashes its input before reading bits of it, so every hash of package
// keyhash is used as it is: under each of them, over 11 nodes and 200,000
// keys, the tests hold the largest load within 1.10 of the mean and the
// smallest above 0.90 (measured: 1.016 and 0.982 at worst).
//
// # Disruption
//
// Minimal on add and on the removal of any node: 10 -> 11 nodes moves
// 9.00% of the test keys (1/11 = 9.09%), and a removal moves exactly the
// removed node's keys.
//
// # Weights
//
// Not supported: every bucket gets the same share. A weight other than 1
// (0 reads as 1) is rejected with an error wrapping kolco.ErrBadWeight.
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
// Buckets above 2^31-1 are treated as 2^31-1; the crate takes any 64-bit
// range.
package flip
