// Package rendezvous places keys by highest random weight: every node
// scores the key, the highest score wins.
//
// It implements Thaler and Ravishankar, "Using Name-Based Mappings to
// Increase Hit Rates" (IEEE/ACM Transactions on Networking, 1998), with
// weights by the logarithmic method of Schindelhauer and Schomaker,
// "Weighted Distributed Hash Tables" (SPAA 2005): a node of weight w scores
// w / -ln(u) for a hash-derived u in (0, 1), which gives it exactly a share
// w / sum(w) of the keys in expectation.
//
// # Lookup cost
//
// O(N) per lookup: one score per node. With the default [Config] that is
// one key hash plus one 64-bit mix per node (plus one logarithm per node
// when weights differ); with a Separator it is one hash of
// ID + Separator + key per node. [Placement.LocateN] costs
// O(N * ceil(n/16)) scores. No lookup allocates, except in separator mode
// for an ID + Separator + key longer than 512 bytes (and in the purego
// build).
//
// # Memory
//
// The node set plus one uint64 (or, with a Separator, one ID + Separator
// string) per node, and one float64 per node when weights differ.
//
// # Balance
//
// Ideal: every node is equally likely to win, so max/avg load differs from
// 1 only by sampling noise, provided the scores are uniform and
// independent across nodes. The default mode mixes the key's hash with
// each node's through fmix64, which makes them so for any hash; separator
// mode compares raw hashes of ID + Separator + key, so a weak hash (fnv1a,
// crc32, whose values for strings sharing a suffix are related) is
// finalized first (see [Config.Separator]). In both modes, under every
// hash of package keyhash, over 11 nodes and 200,000 keys (sampling noise
// alone is 0.7% of a node's load), the tests hold the largest load within
// 1.10 of the mean and the smallest above 0.90.
//
// # Disruption
//
// Minimal. A key moves on an add only if the new node outscores the old
// owner, so only onto the new node; on a removal only the removed node's
// keys move, each to its second-highest scorer. Reweight moves keys only
// onto a node whose weight grows or off a node whose weight shrinks.
//
// # Weights
//
// Honoured exactly in expectation by the logarithmic method; any positive
// finite weight works. When all weights are equal the raw 64-bit hash is
// compared instead, which gives the same owners without a logarithm.
//
// # Replicas
//
// The n highest scorers, best first: distinct, and each prefix of the list
// is the list for a smaller n. When a node fails, its keys move to their
// second choice, which is spread evenly over the survivors.
//
// # Arbitrary removal
//
// Any node can be removed; the placement depends only on the node set, not
// on the order of changes.
//
// # Ties and the article
//
// With Hash keyhash.MD5 and Separator ":", Locate is the rendezvous of the
// article this module reproduces ("Консистентное хеширование: кольцо
// хешей, виртуальные узлы и код на Python"): for equal weights, the node
// with the largest md5 of "node:key" (first 8 digest bytes, big-endian)
// wins. Equal scores (a 64-bit hash collision) go to the node with
// the lower ID; Python's max would pick the node listed first, which is the
// same when the list is sorted.
package rendezvous
