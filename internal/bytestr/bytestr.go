//go:build !purego

package bytestr

import "unsafe"

// Copies reports whether [Of] and [String] copy: false in this build, so
// lookups through them do not allocate.
const Copies = false

// Of returns the bytes of s without copying. The caller must not modify
// them: they are the string's own memory. Hashes that only read their
// argument (md5.Sum, crc32) can take them without an allocation per key.
func Of(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// String returns b as a string without copying. The caller must not modify
// b while the string is in use: a lookup that only hashes a request's key
// and keeps nothing can take it without an allocation per request.
func String(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Join returns prefix+s, in buf when the two fit there. The result aliases
// buf and is valid until buf is written again; callers pass it to a hash
// that only reads it. buf is hidden from escape analysis, so that passing
// the result through an indirect call (a keyhash.Func) does not move a
// caller's stack buffer to the heap, which would cost an allocation per
// call.
func Join(buf []byte, prefix, s string) string {
	n := len(prefix) + len(s)
	if n > len(buf) {
		return prefix + s
	}
	copy(buf[copy(buf, prefix):], s)
	p := (*byte)(noescape(unsafe.Pointer(unsafe.SliceData(buf))))
	return unsafe.String(p, n)
}

// noescape hides p from escape analysis by passing it through a uintptr,
// as the Go runtime's function of the same name does. The result is only
// used while p is live.
//
//go:nosplit
func noescape(p unsafe.Pointer) unsafe.Pointer {
	x := uintptr(p)
	return *(*unsafe.Pointer)(unsafe.Pointer(&x))
}
