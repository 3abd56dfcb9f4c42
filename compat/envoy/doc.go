// Package envoy places keys exactly as Envoy's ring_hash and maglev load
// balancers do (source/extensions/load_balancing_policies/ring_hash and
// maglev, as of Envoy 1.3x; the algorithms have been stable since 1.x), for
// one priority level with every host healthy. [Ring] is a ketama-style ring
// after Karger et al., "Consistent Hashing and Random Trees" (STOC 1997);
// [Maglev] is the lookup table of Eisenbud et al., "Maglev: A Fast and
// Reliable Software Network Load Balancer" (NSDI 2016).
//
// Envoy is not packaged in Debian and is not run by the tests. Both tables
// are checked against the vectors in Envoy's own unit tests
// (ring_hash_lb_test.cc, maglev_lb_test.cc) and against a plain
// transcription written in the tests.
//
// # Hosts and weights
//
// A host is hashed by its key: the envoy.lb hash_key metadata when set,
// else its hostname when use_hostname_for_hashing is on, else its address
// as Envoy prints it ("10.0.0.1:80", "[::1]:80"). [Host.Key] is that
// string. Weights (load_balancing_weight, 1 by default) are normalised to
// sum 1: w_i = weight_i / sum, in float64 like Envoy's double.
//
// # ring_hash
//
// With min the smallest normalised weight, the scale is
// min(ceil(min * minimum_ring_size) / min, maximum_ring_size) (defaults
// 1024 and 8M). Walking the hosts in the given order with running sums,
// target += scale * w_i, and while current < target the host gets the point
// XXH64(key + "_" + i), i counting from 0 per host, and current += 1. A
// request hash h goes to the first point >= h, wrapping to the first.
// Only the default XX_HASH function is supported, not MURMUR_HASH_2.
//
// # maglev
//
// The table has M entries (65537 by default; M must be prime). Hosts are
// sorted by key; host i has offset XXH64(key, seed 0) % M and skip
// XXH64(key, seed 1) % (M - 1) + 1. In rounds r = 1, 2, ..., each host whose
// r * w_i is not below its running target (which grows by the largest w per
// turn taken) claims the next free entry of its permutation
// (offset + skip * j) % M. A request hash h goes to entry h % M.
//
// # Request hash
//
// [Ring.Index] and [Maglev.Index] hash the key as a header hash policy
// hashes one header value: XXH64 with seed 0. Use IndexHash for a hash
// computed otherwise (several policies, cookies, source IP).
//
// # Nodes
//
// Node.ID is the host key, Node.Addr the address, Node.Weight the weight;
// Index returns the host's position in the list given to the constructor.
// LocateN follows Envoy's retry order: for ring_hash the hosts of the
// following ring points (attempt a looks a points further), for maglev the
// entries at h ^ (2^64 - a) for attempts a = 1, 2, ..., up to 1024 attempts,
// completed in host order.
package envoy
