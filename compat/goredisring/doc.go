// Package goredisring places keys exactly as the go-redis v9 client's Ring
// (github.com/redis/go-redis/v9, checked against v9.23.0) does with its
// default NewConsistentHash: rendezvous, or highest random weight, hashing
// (Thaler and Ravishankar, "Using Name-Based Mappings to Increase Hit
// Rates", IEEE/ACM Transactions on Networking, 1998).
//
// # Algorithm
//
// The key is cut to its hash tag, the text between the first '{' and the
// first '}' after it when that text is not empty (the Redis Cluster rule).
// With kh = XXH64(tag), seed 0, each shard scores
// mix64(kh ^ XXH64(shard name)), where mix64 is x ^= x>>12; x ^= x<<25;
// x ^= x>>27; x *= 2685821657736338717, and the highest score wins. Only the
// shard names are hashed, never their addresses.
//
// go-redis takes its shards as a map from name to address and drops shards
// that fail three heartbeats from the set; [New] takes the same map and
// models every shard as up. Two names with equal XXH64 would tie, and
// go-redis would then pick by map iteration order; that is not modelled.
//
// # Nodes
//
// Node.ID is the shard name (the map key), Node.Addr its address, Node.Weight
// 1: the Ring has no weights. Index returns the position of the shard in
// name order, the order of [Ring.Nodes].
//
// # LocateN
//
// go-redis stores a key on one shard. LocateN's further nodes are the shards
// in descending score, the natural rendezvous ranking: the shard that would
// take the key if the first went down comes second.
package goredisring
