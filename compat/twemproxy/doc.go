// Package twemproxy places keys on memcached or redis servers exactly as
// twemproxy (nutcracker) 0.5.0 does, so that a Go program can replace or sit
// beside a nutcracker pool without moving a single key.
//
// twemproxy's "distribution: ketama" is the ketama consistent hash (Richard
// Jones, last.fm, 2007), itself an instance of Karger et al., "Consistent
// Hashing and Random Trees" (STOC 1997); "distribution: modula" is hash
// modulo the total weight.
//
// # Servers
//
// A pool's servers are the "host:port:weight [name]" lines of nutcracker.yml
// ([ParseServer]). The name a server is hashed under is its name when given,
// else the host when the port is 11211, else "host:port" ([Server.RingName]);
// the weight is never part of it. nutcracker sorts a pool's servers by name
// (shorter names first, then bytewise) when it reads the configuration, and
// that order, not the order of the lines, decides ties between equal ketama
// points and the layout of the modula table. [Pool.Index] still answers with
// an index into the slice given to [New].
//
// Only live servers count: twemproxy rebuilds its continuum from the servers
// that are not ejected, so pass [New] the live servers.
//
// # Ketama
//
// Each server gets pps = floorf(pct*160/4*n + 1e-10)*4 points, computed in
// float32 (pct = weight / total weight, n = the number of servers); for
// i = 0..pps/4-1 the MD5 digest of "name-i" gives four little-endian points.
// The points are sorted by value only, keeping server order among equal
// values (nutcracker calls qsort, which glibc up to 2.36, as in Debian 12,
// implements as a stable merge sort); a key goes to the first point >= its
// hash, wrapping to the first.
// Points always use MD5; the key uses the pool's "hash:" setting (default
// fnv1a_64, see package hashkit). A point string longer than 272 bytes is
// cut to 272 bytes, as nutcracker's buffer does.
//
// # Keys
//
// With a two-character hash_tag such as "{}", a key containing "{...}" with
// a non-empty text between the first "{" and the first "}" after it is hashed
// on that text only. A pool of one server sends every key to it. An empty
// key hashes to 0: with ketama it goes to the owner of the lowest point, with
// modula to the first server in name order (memcached never sends one; redis
// can).
//
// # Verification
//
// The tests run nutcracker itself in front of memcached and redis backends
// on 127.0.0.1 and check, for every key stored through it, that the backend
// holding it is the one [Pool.Index] names: every hash, both distributions,
// hash tags, weights, names, a unix socket, port 11211 and a server ejected
// by auto_eject_hosts.
//
// # Not reproduced
//
// "distribution: random" picks a server per request and is rejected by [New].
package twemproxy
