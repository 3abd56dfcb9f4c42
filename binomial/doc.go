// Package binomial places keys with BinomialHash, and removes any node
// with MementoHash.
//
// [Bucket] implements Massimo Coluzzi, Amos Brocco and Alessandro
// Antonucci, "BinomialHash: A Constant Time, Minimal Memory Consistent
// Hash Algorithm" (arXiv:2406.19836, 2024). Its output equals that of the
// authors' Java implementation (BinomialEngine in
// github.com/SUPSI-DTI-ISIN/java-consistent-hashing-algorithms, as of May
// 2025, with four redraws): the tests check 104 values printed by it and a
// digest of a million more. [Placement] adds node names and arbitrary
// removals with the replacement table of Coluzzi et al., "MementoHash: A
// Stateful, Minimal Memory, Best Performing Consistent Hash Algorithm"
// (IEEE/ACM Transactions on Networking, 2024; arXiv:2306.09783), exactly
// as packages jump and jumpback do.
//
// BinomialHash sees the buckets as a complete binary tree: bucket 0, then
// bucket 1, then the levels [2^(l-1), 2^l). The low bits of a key hash
// pick a level of the smallest tree that holds every bucket (the
// enclosing tree), with the probability of its size, and a second draw a
// position within it. A key placed past the last bucket draws again, up
// to four times, taking the first draw that lands on a bucket of the top
// level; a draw below the top level, or four misses, sends it to its place
// in the tree one level smaller (the minor tree). Growing the tree by a
// level keeps every key where it was or moves it into the new level.
//
// # Lookup cost
//
// O(1): one or two rounds of a squared linear congruential step for most
// keys, at most ten. A lookup on [Placement] adds the replacement-table
// walk of package jump. No lookup allocates.
//
// # Memory
//
// [Bucket] needs none; [Placement] keeps per bucket the node and two
// int32s of MementoHash's table.
//
// # Balance
//
// Exact at a power of two; elsewhere the buckets of the top level are a
// little lighter than those below. With E the size of the enclosing tree
// and q = (E-n)/E, a top-level bucket gets 1 + qS and a lower one
// 1 + qS + 2q^5 (in units of 1/E; S = 1 + q + q^2 + q^3): at worst, one
// bucket past a power of two, 3.1% fewer keys than the others, 0.4% for 11
// nodes. [Bucket] reads the key hash's low bits as they are, so a weak
// hash (keyhash.FNV1a, keyhash.CRC32) is finalized first (see
// [Config.Hash]); under every hash of package keyhash, over 11 nodes and
// 200,000 keys, the tests hold the largest load within 1.10 of the mean
// and the smallest above 0.90 (measured: 1.018 and 0.981 at worst).
//
// # Disruption
//
// Minimal on add and on the removal of any node: 10 -> 11 nodes moves
// 9.00% of the test keys (1/11 = 9.09%), and a removal moves exactly the
// removed node's keys.
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
package binomial
