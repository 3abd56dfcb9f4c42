// Package nginx places keys exactly as nginx 1.22's upstream hash module
// (ngx_http_upstream_hash_module) does, so that a Go program can find the
// backend nginx sends a request to without asking nginx. The consistent mode
// is the ketama-style ring of Karger et al., "Consistent Hashing and Random
// Trees" (STOC 1997), in the form of Cache::Memcached::Fast.
//
// # Modes
//
// [Consistent] is `hash $key consistent;`. Each server line's address text as
// written (127.0.0.1:19002) is split at the last ':' followed only by digits
// into host and port ("unix:" paths have no port). With
// base = host + "\x00" + port and prev = 0, the server gets 160*weight points
// h = crc32(base + little-endian uint32(prev)), prev = h. The points of all
// servers, in configuration order, are sorted by value (stably: Debian 12's
// glibc qsort is a merge sort) and of equal values only the first is kept. A
// key goes to the server of the first point >= crc32(key); past the last
// point it wraps to the first.
//
// [Modulo] is plain `hash $key;` (Cache::Memcached compatible): with
// h = (crc32(key) >> 16) & 0x7fff, the key goes to the server whose
// cumulative weight range, in configuration order, holds h % total weight.
//
// # What is hashed
//
// The key is the evaluated `hash` expression as bytes. For `$arg_k` that is
// the query argument still URL-escaped: a request for /?k=a%20b hashes the
// five bytes "a%20b", not "a b". Pass [Consistent.Index] the same bytes.
//
// # Nodes
//
// Node.ID and Node.Addr are the server address exactly as written in the
// configuration; it is the only thing nginx hashes (a server whose address
// changes moves), and server lines must therefore be unique. Node.Weight is
// the weight= parameter (1 by default, at most 1024 here). Index returns the
// position of the server line in the upstream block.
//
// # LocateN
//
// Replicas follow nginx's own retry order: for Consistent the next points of
// the ring (nginx's hash++ on a failed peer), for Modulo the rehash sequence
// hash += (crc32(decimal(n) + key) >> 16) & 0x7fff, n = 1..20. When those are
// exhausted nginx falls back to round robin, which is not deterministic;
// LocateN then completes the list in configuration order.
//
// # Configuration
//
// [ParseConfig] finds the upstream blocks of a whole nginx.conf, splitting it
// into words as nginx does; [Block.Upstream] and [ParseUpstream] read one
// block's hash directive and server lines. include directives are not
// followed.
//
// # Not modelled
//
// nginx falls back to round robin for an empty key and for a single server,
// and routes around peers that failed (max_fails) at run time; that is not
// modelled: Index gives the choice with every peer up except those marked
// `down` in the configuration, which nginx walks around deterministically
// (the next ring point, or the next rehash) and so does Index. A server name
// resolving to several addresses becomes several nginx peers sharing one
// name, balanced round robin among themselves; here each server line is one
// node. The `backup` parameter is rejected by nginx itself with hash
// balancing.
package nginx
