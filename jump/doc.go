// Package jump places keys with jump consistent hash, and removes any node
// with MementoHash.
//
// [Bucket] is the algorithm of Lamping and Veach, "A Fast, Minimal Memory,
// Consistent Hash Algorithm" (arXiv:1406.2294, 2014), bit for bit. It maps
// a key to a bucket number and only lets the last bucket go. [Placement] adds
// node names and arbitrary removals with the replacement table of Coluzzi
// et al., "MementoHash: A Stateful, Minimal Memory, Best Performing
// Consistent Hash Algorithm" (IEEE/ACM Transactions on Networking, 2024;
// arXiv:2306.09783).
//
// # Lookup cost
//
// [Bucket] runs O(ln n) loop iterations with one float division each. A
// lookup on [Placement] is one key hash and one [Bucket] over the bucket array,
// plus, if the key lands on a removed bucket, a short chain of re-hashes
// (expected O(1) while few buckets are removed; the paper bounds it by the
// ratio of removed to working buckets). No lookup allocates. A working
// bucket answers with one read of the bucket array; a removed one adds a
// mispredicted branch, a re-hash and a division per step, about 25-35 ns
// of CPU time here, so that with 10% of the nodes removed at random a
// lookup costs 1.03-1.13x what it costs with none at 100 to 10,000 nodes,
// and the faster bucket functions of jumpback, flip, binomial and power
// 1.1-1.4x (bench module, go run ./cmd/compare -removals). Tried and
// dropped: when any bucket is removed, taking the first re-hash and
// division for every key and choosing its bucket by a conditional move,
// so that only keys whose first step lands on another removed bucket
// branch. At 1000 nodes with 10% removed it measured, against the
// branch (bench module, go test -bench
// 'Removals/nodes=(1000|10000)/(jump|jumpback|flip|binomial|power)/'
// -benchtime 1000000x, the two binaries alternating, two runs each, CPU
// time): jumpback 17.5-18.8 ns against 12.6-13.6, flip 18.1-18.8 against
// 12.1-12.5, binomial 14.0-18.2 against 10.3-10.5, power 15.5-18.8
// against 12.2-13.9. A division for every key costs more than the
// mispredictions of the tenth that needs one.
// Placement.LocateN repeats the lookup once per owner, treating the owners
// found so far as removed: O(n^2) table checks for n owners.
//
// # Memory
//
// [Bucket] needs none. [Placement] keeps, per bucket ever used, the node and two
// int32s for the replacement table, plus a map from ID to bucket.
//
// # Balance
//
// Ideal: jump hash splits keys evenly over buckets (max/avg differs from 1
// only by sampling noise), and MementoHash spreads a removed bucket's keys
// evenly over the working ones. Jump hash's linear congruential steps mix
// any key hash, even crc32's 32 bits: under every hash of package keyhash,
// over 11 nodes and 200,000 keys (sampling noise alone is 0.7% of a
// node's load), the tests hold the largest load within 1.10 of the mean
// and the smallest above 0.90.
//
// # Disruption
//
// Minimal on add and on the removal of any node: a removal moves only the
// removed node's keys, an add moves keys only onto the new node.
//
// # Weights
//
// Not supported: every bucket gets the same share. A weight other than 1
// (0 reads as 1) is rejected with an error wrapping kolco.ErrBadWeight, in
// [New], Placement.Add and Placement.Reweight.
//
// # Replicas
//
// Placement.LocateN returns the owner, then the node that would own the key if
// the owner were removed, and so on: replica i+1 is where the key goes when
// replicas 1..i fail, in that order. Replicas are distinct, and n larger
// than the set returns every node once.
//
// # Arbitrary removal and history
//
// Any node can be removed. Nodes are tied to buckets: [New] gives buckets
// 0..N-1 in ID order, Placement.Add gives a node the most recently removed
// bucket (or a new one at the end), and Placement.Remove takes the node's
// bucket out of work by one of two rules, as the paper's reference
// implementation does: the last bucket, while no bucket is removed, goes by
// shrinking the array (jump hash over one bucket fewer); any other bucket
// is recorded in the replacement table. The placement therefore depends on
// history: the same final node set reached by different changes can place
// keys differently.
//
// Undoing a change restores every key, with nothing in between: removing a
// node and adding it back gives it its bucket again, and removing the node
// just added gives back what was there before it came. A node added with
// none removed takes a new last bucket, and the key moves of [Bucket] are
// reversible: shrinking the array by that bucket sends each of its keys to
// the bucket jump hash gave it before, so a scale-out undone (10 -> 11 ->
// 10 nodes) moves no key twice. Had the removal gone to the replacement
// table instead, as earlier versions of this package did, the added node's
// keys would have been re-hashed over all ten nodes: about 90% of them
// would have landed elsewhere than where they were.
//
// The replica rule holds under both rules of removal: Placement.LocateN
// finds replica i+1 by treating replicas 1..i as removed in that order, each
// by the rule Remove would apply to it at that point - a shrink while each
// is on the last bucket of what is left and none is removed, the table
// otherwise (with the replacer that removal would record). So replica i+1
// is exactly the owner after Remove of replicas 1..i, one at a time, in
// that order; TestReplicasAreFailover checks it with and without removed
// buckets.
package jump
