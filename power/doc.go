// Package power places keys with power consistent hash, and removes any
// node with MementoHash.
//
// [Bucket] implements Eric Leu, "Fast Consistent Hashing in Constant Time"
// (arXiv:2307.12448, 2023), the algorithm it calls power consistent hash.
// With m the smallest power of two at or above the bucket count n, a
// function f places the key in [0, m): the key hash's low bits pick the
// range [h, 2h) of their highest set bit, and a first auxiliary hash of
// the key and h the position in it. A key placed at n or above runs the
// jump process of jump consistent hash from bucket m/2-1 (a second
// auxiliary hash drawing its jumps): it lands in [m/2, n) or stays, and
// then takes f's place in [0, m/2). [Placement] adds node names and
// arbitrary removals with the replacement table of Coluzzi et al.,
// "MementoHash: A Stateful, Minimal Memory, Best Performing Consistent
// Hash Algorithm" (IEEE/ACM Transactions on Networking, 2024;
// arXiv:2306.09783), exactly as packages jump and jumpback do.
//
// The paper leaves the auxiliary hashes open. Here the first is
// SplitMix64's output function of the key hash xor a constant xor h times
// the golden ratio, its low bits taken; the second is the SplitMix64
// stream seeded with the key hash xor another constant, each draw's top 53
// bits plus one over 2^53 giving a uniform u in (0, 1], and a jump going
// to floor((x+1)/u). No implementation by the author is published, so
// there are no reference outputs to compare with: the tests compare
// [Bucket] with a second implementation written from the paper's
// pseudocode as directly as it goes, on a million keys with a million bucket
// counts, and check the properties of a consistent range hash.
//
// # Lookup cost
//
// O(1) expected: one hash for the keys f places below n, and for the rest
// (fewer than half) a jump process from m/2-1 that takes fewer than two
// jumps on average, then possibly one more hash. A lookup on [Placement]
// adds the replacement-table walk of package jump. No lookup allocates.
//
// # Memory
//
// [Bucket] needs none; [Placement] keeps per bucket the node and two
// int32s of MementoHash's table.
//
// # Balance
//
// Ideal: f is uniform on [0, m), and the jumps give each bucket of
// [m/2, n) and the stay below exactly the shares that make every bucket
// 1/n, so loads differ from the mean by sampling noise only. f reads the
// key hash's low bits as they are, so a weak hash (keyhash.FNV1a,
// keyhash.CRC32) is finalized first (see [Config.Hash]); under every hash
// of package keyhash, over 11 nodes and 200,000 keys, the tests hold the
// largest load within 1.10 of the mean and the smallest above 0.90
// (measured: 1.014 and 0.981 at worst).
//
// # Disruption
//
// Minimal on add and on the removal of any node: a removal moves exactly
// the removed node's keys, and growing n moves a key only onto the new
// bucket (across powers of two too, which the tests cross).
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
package power
