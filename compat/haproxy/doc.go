// Package haproxy places keys exactly as HAProxy 2.6 does for a backend
// balanced on a hash (`balance hdr(...)`, `balance uri`, `balance
// url_param`, ...), in both `hash-type consistent` and `hash-type
// map-based`. The consistent mode is the ring of Karger et al., "Consistent
// Hashing and Random Trees" (STOC 1997), as HAProxy's lb_chash.c builds it.
//
// # Key hash
//
// The hashed bytes are hashed with sdbm (h = c + (h << 6) + (h << 16) - h),
// djb2 (5381, h*33 + c), wt6 or CRC-32 (IEEE), and then, when the avalanche
// modifier is on, with full_hash: Bob Jenkins' 6-step integer hash multiplied
// by 3221225473 (mod 2^32). `hash-type consistent` alone means sdbm with
// avalanche; `hash-type map-based` alone means sdbm without; a named function
// gets avalanche only when "avalanche" is written ([ParseHashType]).
//
// For `balance hdr(name)` HAProxy hashes the first comma-separated element
// of the header (commas inside double quotes do not count) with surrounding
// blanks removed: pass [Placement.Index] the bytes [HeaderValue] returns. An
// absent header or an empty first element falls back to round robin and is
// not modelled.
//
// # consistent (lb_chash.c)
//
// Each server of weight w gets 16*w nodes; node j's position is
// full_hash(puid*4096 + j), where puid is the server's `id`, or for servers
// without one the smallest unused number >= a counter that starts at 1 and
// steps once per server line in declaration order. Names and addresses play
// no part. A key hash h goes to the nearer of the first node >= h (wrapping
// to the first node) and the node before it (wrapping to the last), distances
// taken in uint32 arithmetic; a tie goes to the node before.
//
// # map-based (lb_map.c)
//
// Weights are divided by their greatest common divisor; the map has one slot
// per unit of the reduced total weight T and is filled slot by slot: every
// server adds its reduced weight to its score, the first server with the
// largest (score + T) / T takes the slot and gives back T. A key hash h goes
// to slot h % T.
//
// # Nodes
//
// Node.ID is the server name (unique in a backend), Node.Addr its address as
// written, Node.Weight its weight. Index returns the position of the server
// line in declaration order. Backup servers, and servers of weight 0, are
// parsed and keep their place in that order (and, for consistent, their
// puid) but receive no keys: HAProxy uses backups only when every active
// server is down, which is not modelled.
//
// # Configuration
//
// [ParseConfig] finds the backend and listen sections of a whole haproxy.cfg,
// each with the defaults section it inherits (hash-type, default-server,
// hash-balance-factor), as HAProxy 2.6 applies them; [Section.Backend] and
// [ParseBackend] read one backend's lines.
//
// # LocateN
//
// For consistent, replicas are the servers of the following nodes, the walk
// HAProxy takes when it must avoid a server. For map-based they are the
// servers of the following map slots, a kolco choice: HAProxy has no order of
// its own there. Either way the list is completed in declaration order.
package haproxy
