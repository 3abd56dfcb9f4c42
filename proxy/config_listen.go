package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// open listens on the spec. A unix socket file left by a process that no
// longer listens is replaced, as nutcracker does; one that still answers,
// or a path that is not a socket, is an error. (nutcracker unlinks the path
// whatever it is. Two proxies started at the same moment on one stale path
// can still both find it dead, and the later one's replacement wins.)
func (l listenSpec) open(ctx context.Context) (net.Listener, error) {
	var lc net.ListenConfig
	if l.network != "unix" {
		ln, err := lc.Listen(ctx, tcpNetwork(l.addr), l.addr)
		if err != nil {
			return nil, err
		}
		return ln, l.setBacklog(ln)
	}
	if fi, err := os.Lstat(l.addr); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s: %w", l.addr, ErrNotSocket)
		}
		d := net.Dialer{Timeout: time.Second}
		c, err := d.DialContext(ctx, "unix", l.addr)
		if err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: another process listens on it: %w", l.addr, syscall.EADDRINUSE)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%s: %w", l.addr, err)
		}
		if err := os.Remove(l.addr); err != nil {
			return nil, err
		}
	}
	ln, err := lc.Listen(ctx, "unix", l.addr)
	if err != nil {
		return nil, err
	}
	if err := l.setBacklog(ln); err != nil {
		return nil, err
	}
	if l.hasMode {
		if err := os.Chmod(l.addr, l.mode); err != nil {
			ln.Close()
			return nil, err
		}
	}
	return ln, nil
}

// sameAddress reports whether two listen settings name the same address,
// such as one socket path with two modes: the listener is kept.
func sameAddress(a, b string) bool {
	sa, errA := parseListen(a)
	sb, errB := parseListen(b)
	return errA == nil && errB == nil && sa.network == sb.network && sa.addr == sb.addr
}

// remode applies the mode of a unix socket listen setting to the socket
// file of a kept listener.
func remode(listen string) error {
	l, err := parseListen(listen)
	if err != nil || !l.hasMode {
		return err
	}
	return os.Chmod(l.addr, l.mode)
}

// network returns the network of a server address: "unix" for a socket
// path, else "tcp".
func network(addr string) string {
	if strings.HasPrefix(addr, "/") {
		return "unix"
	}
	return "tcp"
}

// tcpNetwork returns the network to listen on addr with: tcp4 for an IPv4
// address, so that 0.0.0.0 is every IPv4 interface and nothing more, as
// nutcracker binds it (Go's "tcp" takes 0.0.0.0 as IPv6's [::] too);
// tcp6 for an IPv6 address; tcp for a name, or none.
func tcpNetwork(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "tcp"
	}
	switch ip := net.ParseIP(host); {
	case ip == nil:
		return "tcp"
	case ip.To4() != nil:
		return "tcp4"
	}
	return "tcp6"
}
