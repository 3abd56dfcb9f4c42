//go:build !purego

package rendezvous

import (
	"unsafe"

	"github.com/kolco-dev/kolco/keyhash"
)

// joinHash returns h(prefix + key) without allocating when the two fit in
// buf. keyhash.Func promises not to retain its argument, so the string may
// point into buf; noescape keeps the compiler from moving buf to the heap
// for the indirect call, which would cost an allocation per node.
func joinHash(h keyhash.Func, buf *[bufSize]byte, prefix, key string) uint64 {
	n := len(prefix) + len(key)
	if n > bufSize {
		return h(prefix + key)
	}
	copy(buf[copy(buf[:], prefix):], key)
	p := (*byte)(noescape(unsafe.Pointer(buf)))
	return h(unsafe.String(p, n))
}

// noescape hides p from escape analysis by passing it through a uintptr,
// as the Go runtime's function of the same name does. The result is only
// used for the duration of the call that receives it, while p is live.
//
//go:nosplit
func noescape(p unsafe.Pointer) unsafe.Pointer {
	x := uintptr(p)
	return *(*unsafe.Pointer)(unsafe.Pointer(&x))
}
