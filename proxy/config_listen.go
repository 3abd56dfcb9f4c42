package proxy

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// maxSocketPath is the longest unix socket path: sockaddr_un holds 108
// bytes with the terminating NUL.
const maxSocketPath = 107

// listenSpec is a pool's listen setting: "host:port", or, as nutcracker
// allows, "/path/to.sock [mode]" for a unix socket whose file gets the
// octal mode given (default: as the umask leaves it).
type listenSpec struct {
	network, addr string
	mode          os.FileMode
	hasMode       bool
	// backlog is the pool's backlog: the queue of connections the kernel
	// completes before the proxy accepts them; 0 leaves Go's (the
	// system's somaxconn).
	backlog int
}

func parseListen(s string) (listenSpec, error) {
	if !strings.HasPrefix(s, "/") {
		_, port, err := net.SplitHostPort(s)
		if err != nil {
			return listenSpec{}, fmt.Errorf("%q: want host:port or /path/to.sock [mode]", s)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return listenSpec{}, fmt.Errorf("%q: bad port", s)
		}
		return listenSpec{network: "tcp", addr: s}, nil
	}
	// As nutcracker reads it: the mode, if any, follows the last space, so
	// a path may itself hold spaces; a mode of 0 leaves the file as the
	// umask makes it.
	l := listenSpec{network: "unix", addr: strings.TrimRight(s, " ")}
	if i := strings.LastIndexByte(l.addr, ' '); i >= 0 {
		m, err := strconv.ParseUint(l.addr[i+1:], 8, 32)
		if err != nil || m > 0o777 {
			return listenSpec{}, fmt.Errorf("%q: the mode after the socket path must be octal, 0 to 0777", s)
		}
		l.addr, l.mode, l.hasMode = strings.TrimRight(l.addr[:i], " "), os.FileMode(m), m != 0
	}
	if len(l.addr) > maxSocketPath {
		return listenSpec{}, fmt.Errorf("%q: a unix socket path is at most %d bytes", l.addr, maxSocketPath)
	}
	return l, nil
}

// sameAddress reports whether two listen settings name the same address,
// such as one socket path with two modes: the listener is kept.
func sameAddress(a, b string) bool {
	sa, errA := parseListen(a)
	sb, errB := parseListen(b)
	return errA == nil && errB == nil && sa.network == sb.network && sa.addr == sb.addr
}

// network returns the network of a server address: "unix" for a socket
// path, else "tcp".
func network(addr string) string {
	if strings.HasPrefix(addr, "/") {
		return "unix"
	}
	return "tcp"
}
