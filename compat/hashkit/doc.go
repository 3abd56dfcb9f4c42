// Package hashkit reproduces, bit for bit, the 32-bit key hashes of
// libhashkit (the hash library of libmemcached 1.1.4) and of twemproxy
// (nutcracker 0.5.0), so that a Go program can place keys exactly where
// those systems place them.
//
// The functions are the classic non-cryptographic string hashes that the
// memcached ecosystem settled on: Bob Jenkins' one-at-a-time hash and his
// lookup3 hashlittle ("A Hash Function for Hash Table Lookup", 1997 and
// 2006), Fowler-Noll-Vo (Fowler, Noll and Vo, "FNV hash", 1991), Paul
// Hsieh's SuperFastHash (2004), Austin Appleby's MurmurHash2 (2008) and
// MurmurHash3 (2011), CRC-32 (ISO 3309 / ITU-T V.42) and the MD5 message
// digest (Rivest, RFC 1321, 1992), the last as used by ketama (Richard Jones,
// last.fm, 2007).
//
// # Quirks kept on purpose
//
// The C sources read key bytes through a plain (signed, on x86) char, so
// one_at_a_time, the four FNV variants and the three-byte tail of hsieh
// widen a byte >= 0x80 to 0xFFFFFFxx (fnv1_64 to 64 bits). "fnv1a_64" is
// 32-bit arithmetic seeded with the low half of the 64-bit offset basis and
// multiplied by the low half of the 64-bit prime. "crc" (libmemcached) and
// "crc32" (twemproxy) return only bits 16..30 of the CRC-32; "crc32a"
// (twemproxy) is the plain CRC-32. twemproxy's "crc16" is CRC-16/XMODEM whose
// 32-bit register is never masked to 16 bits. "murmur" is MurmurHash2 seeded
// with 0xdeadbeef*len, "murmur3" (libhashkit) MurmurHash3_x86_32 with the same
// seed, "jenkins" is hashlittle with initval 13.
//
// Debian's libhashkit is built without hsieh (it returns 1 for every key);
// twemproxy has it, and [Hsieh] matches twemproxy.
//
// # Names
//
// [Parse] accepts the names twemproxy's "hash:" setting and libmemcached's
// MEMCACHED_HASH_* constants use; see [Names].
//
// Every [Func] is safe for concurrent use and does not allocate.
//
// # Verification
//
// The tests compile a C program against the installed libhashkit and compare
// every function, through libhashkit_<fn> and hashkit_digest, over thousands
// of keys of any bytes (empty, single bytes, long keys); package twemproxy's
// tests check the twemproxy-only functions (crc16, crc32a, hsieh) against
// nutcracker itself.
package hashkit
