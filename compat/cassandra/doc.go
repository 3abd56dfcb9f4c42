// Package cassandra places partition keys exactly as Apache Cassandra's
// Murmur3Partitioner (the default since Cassandra 1.2, unchanged through
// 4.x and 5.0) does: a key's token is the first 64 bits of
// MurmurHash3_x64_128 (Austin Appleby, 2011; seed 0) of its serialized
// partition key, and the token ring of "Dynamo: Amazon's Highly Available
// Key-value Store" (DeCandia et al., SOSP 2007) gives it to the node of the
// first token >= it.
//
// # Token
//
// [Token] follows Cassandra's MurmurHash.hash3_x64_128 byte for byte,
// including its one deviation from the reference hash: the 1 to 15 tail
// bytes are widened as Java's signed byte, so a tail byte >= 0x80 is
// sign-extended into the upper bits before it is shifted into place. Keys
// whose tail bytes are all < 0x80 hash as the reference does. The empty key
// has the minimum token, math.MinInt64, and a computed math.MinInt64 is
// replaced by math.MaxInt64, so no key but the empty one has the minimum.
//
// The key is the partition key as Cassandra serializes it: for a single
// column its value's bytes (text as UTF-8, int as 4 bytes big-endian,
// bigint as 8, uuid as 16); for a composite key each component as a 2-byte
// big-endian length, the bytes and a zero byte ([CompositeKey]).
//
// # Ring
//
// A [Ring] is built from the endpoints and their tokens (num_tokens vnodes
// each), as `nodetool ring` lists them ([ParseNodetoolRing]). A token t
// belongs to the endpoint holding the smallest token >= t, wrapping to the
// smallest token overall; that endpoint is the key's primary replica.
// Replica placement beyond the primary depends on the keyspace's strategy
// (SimpleStrategy walks the ring, NetworkTopologyStrategy also racks and
// datacenters); LocateN walks the ring, which is SimpleStrategy's order.
//
// # Nodes
//
// Node.ID is the endpoint as given (its address or host ID), Node.Addr its
// address, Node.Weight its number of tokens. Index returns the endpoint's
// position in the list given to [New].
//
// Cassandra itself is not run by the tests (it is not packaged in Debian);
// tokens are checked against vectors published with Cassandra drivers
// (elixir-cassandra, cassandra-sharp), high tail bytes included, and against
// an independent MurmurHash3 (github.com/twmb/murmur3) for keys the quirk
// does not touch.
package cassandra
