//go:build linux

package redis

import (
	"os"
	"syscall"
	"unsafe"
)

// dropPages gives the whole pages of b back to the system (MADV_DONTNEED),
// b being memory nothing reads or writes again until the collector frees
// it: the pages read as zeros if touched, and the collector zeroes freed
// memory before it reuses it anyway. Only pages wholly inside b are given
// back, so that no other object's memory is touched. It is a hint: an
// error changes nothing.
func dropPages(b []byte) {
	if len(b) == 0 {
		return
	}
	page := uintptr(os.Getpagesize())
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (page - addr%page) % page
	if lo >= uintptr(len(b)) {
		return
	}
	hi := lo + (uintptr(len(b))-lo)/page*page
	if hi > lo {
		_ = syscall.Madvise(b[lo:hi], syscall.MADV_DONTNEED)
	}
}
