//go:build !linux || race || msan || asan

package proxy

import "net"

// rawIO is used on Linux only, and not in race, memory or address
// sanitizer builds (see io_raw_linux.go); elsewhere connections are read
// and written as they are.
type rawIO struct{ net.Conn }

func newRawIO(net.Conn) *rawIO { return nil }
