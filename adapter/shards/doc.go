// Package shards is what kolco's client adapters (packages gomemcache,
// goredis, groupcachepeers and grpcbalancer beside it) share: a placement
// over a set of servers built as kolco proxy builds a pool's, with a value
// per server - an address, a client, a peer - kept beside it, and the
// following of a membership source that changes it.
//
// # Agreement with kolco proxy
//
// A [Config] names a pool's placement in the words of kolco proxy's pool
// configuration: a kolco algorithm (package algo) or twemproxy's ketama or
// modula, the key hash, the ring's virtual nodes, and the hash tag applied
// before hashing. Over the same nodes - IDs as the proxy names servers (the
// server's name, else its address as twemproxy writes it; see
// membership.ParseNutcracker), the same weights - a [Table] places every
// key where the proxy, and kolco locate, place it.
//
// # Changes
//
// A [Live] placement changes by [kolco.Change]s applied with
// [kolco.Mutable.Apply], never by a rebuild, so that history-dependent
// algorithms (jump, anchor, dx, slots, ...) move only the keys a change
// must move. The change is applied to a copy restored from the placement's
// state (algo.Restore), and the copy is published together with the new
// per-server values in one atomic swap: a lookup never sees a placement
// and values of different versions, and takes no lock. The value of each
// server is made once per change that adds or readdresses it (an address
// resolved, a client created), never per request. twemproxy's ketama and
// modula are rebuilt from the server list, as nutcracker rebuilds them.
//
// [Follow] follows a membership.Source with package membership's Follower:
// each version is applied as the change from the version before, and for
// a history-dependent algorithm whose store keeps the placement state, the
// placement is the store's, so that an app started late places keys as one
// that saw every change.
package shards
