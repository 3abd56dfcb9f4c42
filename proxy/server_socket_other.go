//go:build !unix

package proxy

import (
	"fmt"
	"net"
	"os"
)

// setBacklog leaves the backlog as Go sets it where listen(2) cannot be
// called again (see server_socket_unix.go).
func (l listenSpec) setBacklog(net.Listener) error { return nil }

// listenerFile returns a copy of ln's socket for a new process to inherit
// (see server_socket_unix.go).
func listenerFile(ln net.Listener, name string) (*os.File, error) {
	fl, ok := ln.(interface{ File() (*os.File, error) })
	if !ok {
		return nil, fmt.Errorf("%s: %T has no file", name, ln)
	}
	return fl.File()
}
