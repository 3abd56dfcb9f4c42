// Package maglev places keys with a Maglev lookup table: each node fills
// entries of a prime-sized table by walking its own permutation, and a key's
// node is the owner of entry hash(key) mod size.
//
// The algorithm is from Daniel E. Eisenbud et al., "Maglev: A Fast and
// Reliable Software Network Load Balancer" (NSDI 2016), section 3.4
// ("Consistent Hashing"). Node permutations come from two independent
// hashes of the node ID, as the paper prescribes: offset = XXH3(ID) mod M,
// skip = XXH64(ID) mod (M-1) + 1, entry j = (offset + j*skip) mod M. The
// table is filled round by round in node-ID order (Algorithm 1 of the
// paper), so it does not depend on the order of changes.
//
// # Properties
//
//   - Lookup cost: one key hash, one modulo and one array index; no lock and
//     no allocation. [Table.LocateN] walks the following entries, about
//     n*ln(n) of them for n owners out of many nodes.
//   - Memory: 4 bytes per entry (256 KiB for the default 65537) plus the
//     node list. Each change rebuilds the table in O(M log M) expected time.
//   - Balance: every node owns floor(M/N) or ceil(M/N) entries for equal
//     weights, so the table is balanced to within one entry; keys then
//     spread as evenly as they hash. The paper asks for M > 100*N; with
//     more nodes than entries, some nodes own none. The entry is the hash
//     modulo a prime, which uses every bit, so any hash of package keyhash
//     serves: over 11 nodes and 200,000 keys (sampling noise alone is 0.7%
//     of a node's load) the tests hold the largest load within 1.10 of the
//     mean and the smallest above 0.90 under each.
//   - Disruption: not minimal. A change of one node moves its share of
//     keys and, besides, some keys between nodes that did not change,
//     because the others' permutations interleave differently. Measured
//     with M = 65537 on one add or remove: 0.2% of keys moved needlessly at
//     10 nodes, 0.6% at 100 and 0.5% at 1000 (the minimal shares being 9%,
//     1% and 0.1%); the tests assert under 1.5%. A larger table lowers it.
//   - Weights: supported by weighted turns: a node of half the largest
//     weight takes an entry every other round, so entry counts follow the
//     weights to within one or two entries.
//   - Replicas: [Table.LocateN] returns the owners of the following table
//     entries in order of first appearance. The paper defines no replicas;
//     this order has no counterpart in the Maglev system.
//   - Arbitrary removal: supported; any node may leave (with the disruption
//     above).
package maglev
