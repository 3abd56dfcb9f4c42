//go:build !linux

package proxy

import "net"

// unread is asked of the socket on Linux only (see io_unread_linux.go);
// elsewhere a server's silence is measured by what the proxy has read.
func unread(net.Conn) int { return 0 }
