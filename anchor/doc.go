// Package anchor places keys with AnchorHash: a fixed set of buckets (the
// anchor) of which some work, each node holding one working bucket; a key
// hashed onto a removed bucket is rehashed into the working set as it was
// when that bucket was removed, until it reaches a working one.
//
// The algorithm is from Gal Mendelson, Shay Vargaftik, Katherine Barabash,
// Dean H. Lorenz, Isaac Keslassy and Ariel Orda, "AnchorHash: A Scalable
// Consistent Hash" (IEEE/ACM Transactions on Networking, 2020;
// arXiv:1812.09674). [Placement] is the paper's Algorithm 3, which keeps the
// arrays A, K, W and L instead of a copy of the working set per removed
// bucket.
//
// # Properties
//
//   - Lookup cost: one key hash, then an expected 1 + ln(C/N) bucket hops
//     for capacity C and N working nodes (a few for the default C = 2N), each
//     a 64-bit mix and a multiply; no lock and no allocation.
//     [Placement.LocateN] repeats the lookup with re-mixed hashes until it has n
//     distinct owners.
//   - Memory: about 24 bytes per bucket of capacity, plus a map from node
//     ID to bucket used only by writers. Each change copies that state:
//     O(C) time.
//   - Balance: every key is uniform over the working buckets, so loads are
//     those of a uniform random assignment (spread ~ 1/sqrt(keys per node)),
//     provided the key hash is uniform in its top bits, which the bucket is
//     taken from: a weak hash (fnv1a, crc32) is finalized first (see
//     [Config.Hash]). Under every hash of package keyhash, over 11 nodes and
//     200,000 keys (sampling noise alone is 0.7% of a node's load), the
//     tests hold the largest load within 1.10 of the mean and the smallest
//     above 0.90.
//   - Disruption: minimal, under arbitrary changes: adding a node moves keys
//     only onto it, removing any node moves only its keys.
//   - Weights: not supported; a node or Reweight with a weight other than 1
//     is rejected with [kolco.ErrBadWeight].
//   - Replicas: [Placement.LocateN]; replica i is an independent anchor lookup,
//     so each replica keeps minimal disruption.
//   - Arbitrary removal: supported; any node may leave. The set may never
//     exceed the fixed [Config.Capacity] ([ErrCapacity]).
//
// # Placement depends on history
//
// [New] gives nodes buckets 0, 1, ... in ID order, and Add revives the most
// recently removed bucket (a stack). So the same node set reached by
// different changes can place keys differently: removing A then B and
// re-adding A gives A the bucket B had. Undoing changes in reverse order
// restores the placement exactly, and a node removed and re-added at once
// gets its keys back. Within one call, Add and Remove take nodes in ID
// order, so the order of arguments does not matter. Processes that must
// agree on placement must apply the same sequence of changes (the paper
// asks for consensus on their order); kolco's `locate --add/--remove`
// reproduces a history for that reason.
package anchor
