// Package libmemcached places keys on memcached servers exactly as a
// libmemcached 1.1.4 client does (memcached_generate_hash,
// memcached_server_by_key), so that a Go program and a C, PHP or Python
// client built on libmemcached agree on where every key lives.
//
// Its consistent distributions are ketama (Richard Jones, last.fm, 2007), an
// instance of Karger et al., "Consistent Hashing and Random Trees" (STOC
// 1997); modula is hash modulo the server count.
//
// # Distributions
//
// [Config.Distribution] models the behaviours a client sets before adding
// its servers:
//
//   - "modula" (libmemcached's default): server = hash(key) % n. Weights
//     play no part.
//   - "ketama" (MEMCACHED_BEHAVIOR_KETAMA, MEMCACHED_DISTRIBUTION_CONSISTENT):
//     100 points per server, each the key hash of "host-i" (port 11211) or
//     "host:port-i", i = 0..99. The separate MEMCACHED_BEHAVIOR_KETAMA_HASH is
//     stored by libmemcached but never used.
//   - "ketama_weighted" (MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED): also sets the
//     key hash to md5. pps = floor(f32(f32(f32(pct*160)/4)*n) + 1e-10f)*4 in
//     float32, pct = weight/total; for i = 0..pps/4-1 the MD5 digest of the
//     same string gives four little-endian points. Equal weights do not
//     always give 160 points (n = 25 gives 156): that is what libmemcached
//     does.
//   - "ketama_spy" (MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY): the point
//     string is "/host:port-i" for every port.
//
// Adding a server of weight > 1 under a consistent distribution switches
// libmemcached to weighted md5 points but keeps the key hash (default
// one_at_a_time); [New] does the same. Points are sorted by value, ties by
// server index; a key goes to the first point >= its hash, wrapping to the
// first. A single server gets every key.
//
// # Servers
//
// The host is hashed exactly as given, never resolved: "localhost" and
// "127.0.0.1" place keys differently. Port 0 means 11211 and an empty host
// means "localhost", as in memcached_server_add_with_weight; weight 0 means
// 1. With [Config.SortHosts] (MEMCACHED_BEHAVIOR_SORT_HOSTS) libmemcached
// first sorts its servers by host (strcmp) then port, and that order decides
// modula and ties; [Pool.Index] still indexes the slice given to [New].
//
// [ParseServers] reads a server list as memcached_servers_parse does
// ("host:port:weight, host2:port2"), and marks "/path" entries as unix
// sockets ([Server.Socket]), hashed as "path:0-i".
//
// Debian's libmemcached is built without hsieh: setting MEMCACHED_HASH_HSIEH
// fails there and the client keeps its previous hash. [New] accepts "hsieh"
// and hashes as a libmemcached built with it does (the same code as
// twemproxy's hsieh, which package twemproxy checks against nutcracker).
//
// # Verification
//
// The tests compile small C programs against the installed libmemcached and
// compare [Pool.Index] with memcached_generate_hash (and the chosen server's
// host and port) for every distribution, several hashes, server lists with
// names, ports and unequal weights, with and without SORT_HOSTS, and
// [ParseServers] with memcached_servers_parse.
//
// # Not reproduced
//
// Random and virtual-bucket distributions, namespaces
// (MEMCACHED_CALLBACK_NAMESPACE with hash_with_namespace), custom hash
// functions, auto-ejected servers (pass only the live ones), and servers
// added before the distribution is chosen (libmemcached then keeps the
// weighted switch off).
package libmemcached
