//go:build !linux

package proxy

import "net"

// rawIO is used on Linux only; elsewhere connections are read and written
// as they are.
type rawIO struct{ net.Conn }

func newRawIO(net.Conn) *rawIO { return nil }
