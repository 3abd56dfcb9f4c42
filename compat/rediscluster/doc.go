// Package rediscluster places keys exactly as a running Redis Cluster (7.0) does:
// a key's hash slot, CRC16 of its hash tag modulo 16384, is served by the
// master whose slot ranges hold it. The scheme is the "Redis Cluster
// Specification" (Salvatore Sanfilippo, 2015); the slot function is the
// slots package's [slots.KeySlot], checked there key by key against
// redis-server's CLUSTER KEYSLOT.
//
// A [Cluster] is built from the masters' slot ranges, as CLUSTER SLOTS or
// CLUSTER SHARDS report them, or from CLUSTER NODES output with
// [ParseClusterNodes]. Unlike a ring it is data, not a function of the node
// set: it answers for one snapshot of the slot table and must be rebuilt
// after a resharding or a failover.
//
// # Nodes
//
// Node.ID is the master's 40-character node ID, Redis's own identity for a
// node (an address can change on restart; the ID does not); when a master is
// given without one, its address is used. Node.Addr is "ip:port" and
// Node.Weight the number of slots it serves. Index returns the position of
// the master in the list given to [New].
//
// # Not modelled
//
// Every slot must be served: a cluster with uncovered slots refuses those
// keys (CLUSTERDOWN) and [New] refuses the table. Slots in migration
// ([slot->-id] and [slot-<-id] in CLUSTER NODES) count for their current
// owner; the ASK redirection of a key already moved is not modelled.
// Replicas serve no slots and are not nodes here.
//
// # LocateN
//
// Redis keeps one copy of a key on its master; LocateN's further nodes, the
// masters of the following slot ranges, are a kolco choice, as in the slots
// package.
package rediscluster
