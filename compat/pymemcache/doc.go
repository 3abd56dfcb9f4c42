// Package pymemcache places keys exactly as pymemcache 3.5's HashClient does
// with its default hasher, RendezvousHash, so that a Go program and a Python
// program sharing a memcached pool agree on every key.
//
// RendezvousHash is highest random weight hashing (Thaler and Ravishankar,
// "Using Name-Based Mappings to Increase Hit Rates", IEEE/ACM Transactions
// on Networking, 1998): each node scores
// MurmurHash3_x86_32(node + "-" + key, seed 0) and the highest score wins;
// equal scores go to the larger node string.
//
// # Nodes
//
// HashClient names a server "host:port": [NodeName] turns a server spec as
// HashClient takes it ("host:port", "host" meaning port 11211,
// "[v6addr]:port", "/path" or "unix:/path") into that name.
//
// # Keys and non-ASCII text
//
// pymemcache's murmur3_32 is pure Python over a str: it hashes
// ord(ch) & 0xff for each character, not the UTF-8 bytes. HashClient hands
// the hasher the key object the caller passed, before key_prefix is added
// and before any encoding, so:
//
//   - A str key (the usual case) is hashed character by character. [Pool.Index]
//     and Locate take the key's UTF-8 bytes, decode them and hash the low
//     byte of each code point: "é" (U+00E9) hashes as 0xE9, "€" (U+20AC) as
//     0xAC, so distinct keys can collide in the hash (they still work, they
//     merely share a server choice). A byte that is not valid UTF-8 stands
//     for itself, as a str decoded with errors="surrogateescape" would.
//     Non-ASCII str keys need allow_unicode_keys=True in pymemcache; without
//     it pymemcache rejects them before they are sent, but only after the
//     hasher has chosen a server.
//   - A bytes key is formatted with "%s", which in Python 3 gives its repr:
//     b"abc" hashes as node + "-b'abc'". [Pool.IndexBytesKey] reproduces that
//     repr (quotes, \t \n \r, \\ and \xNN escapes) byte for byte.
//   - key_prefix never takes part in the hash.
//
// Node names are hashed the same way as str keys.
//
// # Verification
//
// The tests run Debian's /usr/bin/python3 with pymemcache and compare
// RendezvousHash.get_node (str and bytes keys) and HashClient's server
// choice with [Pool.Index] and [Pool.IndexBytesKey], over ASCII, Latin-1,
// Cyrillic, CJK and emoji text and bytes that are not UTF-8.
package pymemcache
