// Package jumpbackanchor places keys with JumpBackAnchorHash: JumpBackHash
// over all the buckets ever used, and the removal of any node with the
// memory-optimised replacement scheme of AnchorHash, without a fixed
// capacity.
//
// The algorithm is Otmar Ertl's, published in hash4j (Dynatrace, release
// 0.22, 2025; github.com/dynatrace-oss/hash4j,
// ConsistentHashing.jumpBackAnchorHash) with no paper of its own. It
// combines JumpBackHash (Ertl, "JumpBackHash: Say Goodbye to the Modulo
// Operation to Distribute Keys Uniformly to Buckets", Software: Practice
// and Experience, 2025; arXiv:2403.18682), AnchorHash (Mendelson et al.,
// "AnchorHash: A Scalable Consistent Hash", IEEE/ACM Transactions on
// Networking, 2020; arXiv:1812.09674) in the memory-optimised form of its
// authors' cpp-anchorhash, and the stack of removed buckets of MementoHash
// (Coluzzi et al., IEEE/ACM Transactions on Networking, 2024;
// arXiv:2306.09783). A key hash seeds a SplitMix64 generator; JumpBackHash
// draws the key's bucket among all buckets ever used, and a key on a
// removed bucket draws on from the same generator a position in the set
// of buckets that worked after that removal, until it reaches a working
// bucket. Its output equals hash4j's jumpBackAnchorHash(
// PseudoRandomGeneratorProvider.splitMix64_V1()) through any history of
// adds and removals: the tests follow hash4j's own buckets and lookups
// along random histories.
//
// # Lookup cost
//
// One key hash and JumpBackHash (about two generator steps), then, for a
// key on a removed bucket, a generator step and a short walk of
// replacements per removed bucket met: expected O(1 + ln^2(n_max/n)) for
// n working of n_max buckets removed at random, as hash4j's documentation
// states. Some removal orders make the walk long: of n_max buckets, the
// first and then the last down to the third removed leaves walks of
// O(n_max) (hash4j names that order; TestLongRemovalChains runs it). No
// lookup takes a lock or allocates. LocateN repeats the lookup once per
// owner with the owners found so far removed, each removal scanned from a
// list: O(n^2) entry reads for n owners; it allocates nothing for up to 65
// owners.
//
// Measured in the bench module (go run ./cmd/compare -scale; CPU time,
// interleaved rounds, over a million keys) beside jumpback, anchor and
// jump on a busy 2-core machine: 12.2 ns a lookup at 1000 nodes against
// 13.4, 19.9 and 62.0; 68.5 ns at 100,000 nodes against 82.2, 64.4 and
// 154.2; 144 ns at a million against 159, 175 and 302. With 10% of the
// nodes removed at random a lookup costs 1.09-1.20x what it costs with
// none at 100 and 1000 nodes (two runs).
//
// # Memory
//
// Per bucket ever used, removed or working: the node's ID and index (20
// bytes), and 8 bytes of replacement entry while any bucket is removed: 78
// heap bytes a node in all at a million nodes (the node set included),
// against 86 for jumpback's and 160 for anchor's. The
// state that decides placement ([Placement.MarshalState]) holds the number
// of buckets and the removed buckets in the order of their removal, as
// hash4j's 4(n_max - n + 1) bytes do, plus the node on each working bucket.
// Each change copies the O(n_max) arrays.
//
// # Balance
//
// Ideal: every working bucket is equally likely, after any removals (max/avg
// differs from 1 only by sampling noise). SplitMix64 mixes any key hash
// first: under every hash of package keyhash, over 11 nodes and 200,000
// keys (sampling noise alone is 0.7% of a node's load), the tests hold the
// largest load within 1.10 of the mean and the smallest above 0.90.
//
// # Disruption
//
// Minimal on add and on the removal of any node: an add moves keys only
// onto the new node, a removal moves only the removed node's keys.
//
// # Weights
//
// Not supported: a weight other than 1 (0 reads as 1) is rejected with an
// error wrapping kolco.ErrBadWeight.
//
// # Replicas
//
// [Placement.LocateN] returns the owner, then the node that would own the
// key if the owner were removed, and so on: replica i+1 is the owner once
// replicas 1..i are removed in order, each by the rule Remove applies.
// Replicas are distinct, and n larger than the set returns every node
// once.
//
// # Arbitrary removal and history
//
// Any node can be removed, and there is no capacity to choose. Nodes are
// tied to buckets: [New] gives buckets 0..N-1 in ID order; an add takes the
// most recently removed bucket, or a new one at the end when none is
// removed; a removal, as in hash4j, shrinks the set when it takes the last
// bucket while none is removed, empties the whole set (forgetting its
// history) when it takes the last working bucket, and otherwise records
// the bucket. Within one change, removals and then adds go in the order
// given. The placement therefore depends on history, and processes that
// must agree apply the same changes or share the state (see [Restore]).
// Undoing a change restores every key and the state exactly: removing the
// node just added (a scale-out undone), or adding back the node just
// removed - unless it was the last node, whose removal forgets the history,
// so that the set starts afresh.
package jumpbackanchor
