// Package ring is a consistent hash ring with virtual nodes, weights,
// zone-aware replica sets and lock-free lookups, after Karger et al.,
// "Consistent Hashing and Random Trees" (STOC 1997), with the replica walk of
// DeCandia et al., "Dynamo: Amazon's Highly Available Key-value Store" (SOSP 2007).
//
// # Placement
//
// Every node gets round(V × weight) points (at least one) on a 64-bit circle:
// point i of node ID is Hash(Label(ID, i)), with the label "ID#i" by default.
// A key belongs to the node of the first point at or after Hash(key),
// wrapping past the largest point to the smallest. Equal points are ordered
// by node ID, so a node set gives the same ring whatever the order in which
// its nodes were added, and a node removed and re-added under the same ID
// gets back exactly its old keys.
//
// [Ring.LocateN] walks clockwise from the key's point and collects distinct
// nodes: the Dynamo preference list. With [Config.ZoneAware] it first takes
// one node from each zone in walk order and only then repeats zones. The
// result for n is always a prefix of the result for n+1, and when n exceeds
// the number of nodes every node is returned once.
//
// # Seed-compatible mode
//
// [Seed] returns the configuration of the seed article's Python ring: 100
// virtual nodes, labels "ID#i", and the md5 key hash (the first 8 bytes of the
// digest read big-endian). With it, lookups agree key for key with that ring.
//
// # Cost
//
// Lookup: one hash of the key, one probe of a prefix index (one slot per two
// points, the slot found by a multiplication, not a search) and a branch-free
// count of the points below the hash among the eight that start the slot, so
// O(1) expected, with no mispredicted branch and no allocation, for hashes
// that spread over all 64 bits (crc32's 32-bit values crowd the first slots,
// where the lookup falls back to a binary search). The default
// hash (keyhash.XXH3) is called directly rather than through Config.Hash.
// Memory: 8 bytes per point, 4 bytes per point for the owner, 2 bytes per
// point for the index. A change builds a new snapshot: adding nodes copies the
// old points in blocks around the new ones (found by binary search), removing
// merges in one linear pass; nothing is re-sorted. It is published with one
// atomic pointer swap: readers never wait and never see half a change.
//
// # Balance and disruption
//
// With N nodes of V points each, the relative standard deviation of the key
// share is about sqrt((N-1)/(N·V+1)); with V = 1 the largest share is about
// H_N times the average. Adding a node moves about 1/(N+1) of the keys, all
// onto the new node; removing one moves only its keys.
//
// That holds for a hash whose values spread over the whole circle, for the
// point labels as for the keys. A weak hash is finalized first (see
// [Config.Hash]): fnv1a's values of "ID#0", "ID#1", ... crowd together, and
// crc32's fill only 2^-32 of the circle. At 11 nodes of 160 points the
// spread is sqrt(10/1761) = 0.075, and under every hash of package keyhash,
// over node names of several shapes and 200,000 keys, the tests hold the
// largest load within 1.35 of the mean and the smallest above 0.65, 4.6
// spreads either way.
package ring
