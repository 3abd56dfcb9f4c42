// Package slots places keys the way Redis Cluster does: a fixed number of
// hash slots (16384 by default), a key's slot being CRC16 of its hash tag,
// and an explicit table saying which node owns each slot.
//
// The scheme is Redis Cluster's, specified in the "Redis Cluster
// Specification" (Salvatore Sanfilippo, 2015, redis.io/docs/reference/
// cluster-spec); the checksum is CRC-16/XMODEM. Unlike a ring, ownership is
// data, not a function of the node set: a [Map] can be built from the slot
// table of a running cluster ([FromRanges]) and says, on every change, which
// slots must migrate ([Move]).
//
// # Key slots
//
// [KeySlot] returns what CLUSTER KEYSLOT returns: CRC16 of the key, or of
// its hash tag - the text between the first '{' and the next '}' when that
// text is not empty - modulo 16384. Keys sharing a tag share a slot, so
// "{user1000}.following" and "{user1000}.followers" land together. A
// [Config.Count] other than 16384 keeps the rules but takes CRC16 modulo
// that count. A [Config.Hash] replaces CRC16 by another hash of the hash
// tag (finalized when weak, see keyhash.Finalized), for slots that need not
// match Redis.
//
// # Properties
//
//   - Lookup cost: O(len(key)) for the CRC, then one array index; no lock
//     and no allocation. [Map.LocateN] steps over runs of slots with one
//     owner, so it costs O(runs walked * n), a few steps for a fresh map.
//   - Memory: 8 bytes per slot (128 KiB for 16384 slots: owner and next
//     run) plus the node list. A change costs O(slots * log nodes).
//   - Balance: each node owns a whole number of slots, its weighted share
//     rounded by the Sainte-Laguë (Webster) divisor method: within about one
//     slot of its exact quota. Key balance then depends on how evenly keys
//     fall into slots; with 16384 slots and 1000 nodes a node owns 16 or 17
//     slots, so shares differ by up to 1/16 from rounding alone. With more
//     nodes than slots some nodes own nothing. Under CRC16 and every hash
//     of package keyhash, over 11 nodes and 200,000 keys (sampling noise
//     alone is 0.7% of a node's load), the tests hold the largest load
//     within 1.10 of the mean and the smallest above 0.90.
//   - Disruption: minimal. A change moves the fewest slots that reach the
//     new targets: adding nodes moves slots only onto them, removing nodes
//     moves only their slots, re-weighting moves slots only to or from the
//     re-weighted node ([Map.Migrate] reports them). The divisor method is
//     what makes this hold: it never raises an old node's target when
//     another node joins or grows.
//   - Weights: supported (Node.Weight), to the slot.
//   - Replicas: [Map.LocateN] returns the owner of the key's slot and then
//     the owners of the following slots, in order of first appearance. Redis
//     itself keeps replicas per primary, outside the slot table; this order
//     is a convenience with no Redis counterpart.
//   - Arbitrary removal: supported; any node may leave.
//
// # History
//
// [New] assigns contiguous runs of slots in node-ID order, so it does not
// depend on the order of its nodes. After that the table is state: which
// slots a node owns depends on the changes that led to the current node
// set, exactly as in a real cluster. The number of slots each node owns
// does not: it is always the weighted target share (except in a map from
// [FromRanges] before its first change or [Map.Rebalance]).
//
// Undoing a change is therefore not free, unlike in the module's other
// algorithms: the table keeps no memory of where a slot came from. A node
// added and removed again hands its slots back by the rule of every
// removal (to the nodes below target in ID order and slot order), which
// gives each node its own slots back in a map as New builds it, but not
// after other changes: kolco's property suite measures 6.9-7.5% of keys
// moved by such an undo along a random history of 14 nodes (11.9% for two
// nodes added and removed in turn). A node removed and added back takes
// each node's highest-numbered slots rather than its own, 2.7-22.7% of
// keys. A Redis Cluster resharded by hand behaves alike.
package slots
