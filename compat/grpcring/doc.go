// Package grpcring places keys exactly as grpc-go's ring_hash balancer
// (google.golang.org/grpc/balancer/ringhash, v1.83) picks endpoints, so
// that a Go program, kolco locate or kolco's own gRPC balancer can tell
// which backend a gRPC client sends a request to, without linking gRPC.
//
// ring_hash is Envoy's ring (Karger et al., "Consistent Hashing and Random
// Trees", STOC 1997, with weights as Envoy scales them) as gRFC A42, A61
// and A76 carry it into gRPC.
//
// # The ring
//
// Each endpoint is hashed under its hash key: the key set on the endpoint
// (resolver/ringhash.SetHashKey, from EDS metadata under xDS), else its
// first address. Its weight is the endpoint's weight attribute, 1 when
// unset. The weights are normalised by their sum (a uint32 in grpc-go), and
// the ring gets scale = min(ceil(minWeight * minRingSize) / minWeight,
// maxRingSize) entries in all: walking the endpoints sorted by hash key,
// each adds entries XXH64("<hash key>_<i>"), i = 0, 1, ..., while the
// running count is below the running sum of scale * weight. The entries
// are sorted by hash; a request goes to the first entry >= its hash,
// wrapping to the first.
//
// minRingSize and maxRingSize default to 1024 and 4096, may not exceed 8M,
// and are then both capped by GRPC_RING_HASH_CAP (default 4096): with the
// defaults, a ring never has more than 4096 entries, whatever the
// configuration asks.
//
// # The request hash
//
// With requestHashHeader set (gRFC A76), a request's hash is XXH64 of the
// header's values joined by "," ([RequestHash]); for a single value, of
// the value itself, which is what [Ring.Locate] hashes. Without the header
// grpc-go picks a random hash, and under xDS the route's hash policy sets
// it ([Ring.IndexHash] takes any hash).
//
// # Not reproduced
//
// Two endpoints with one hash key are refused (kolco.ErrDuplicateNode):
// grpc-go keeps one state per key and so sends both endpoints' requests to
// one of them. Weights summing above 2^32-1 are refused
// (kolco.ErrBadWeight): grpc-go's sum wraps around. grpc-go sorts the
// entries with an unstable sort; two entries with the same 64-bit hash keep
// endpoint order here, which grpc-go does not promise.
//
// # Verification
//
// The tests run grpc-go's own balancer over real connections on
// 127.0.0.1: for generated endpoint sets (hash keys and addresses,
// weights, ring sizes), every request carrying the hash header reaches the
// backend [Ring.Locate] names.
package grpcring
