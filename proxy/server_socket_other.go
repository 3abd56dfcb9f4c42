//go:build !unix

package proxy

import "net"

// setBacklog leaves the backlog as Go sets it where listen(2) cannot be
// called again (see server_socket_unix.go).
func (l listenSpec) setBacklog(net.Listener) error { return nil }
