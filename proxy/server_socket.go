package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"syscall"
	"time"
)

// The server opens every socket the process listens on, so that each is
// one it knows, hands over (server_handover.go) and closes; the config
// wing only reads the settings (config_listen.go).

// sockets are the listening sockets a server opens, or takes from the
// process it took over from (see server_handover.go). The server's mu
// guards them.
type sockets struct {
	// inherited are the listening sockets of the process this one took
	// over from, by listenKey, until Start takes them.
	inherited map[string]net.Listener
	// accepting is closed once the server accepts on inherited sockets
	// (see Server.Serving).
	accepting chan struct{}
}

// claim returns the inherited listener for key, accepting once the
// server serves (see Server.Serving), or nil.
func (k *sockets) claim(key string) net.Listener {
	ln := k.inherited[key]
	if ln == nil {
		return nil
	}
	delete(k.inherited, key)
	return &gatedListener{Listener: ln, open: k.gate(), closed: make(chan struct{})}
}

// closeUnclaimed closes the inherited listeners nothing claimed.
func (k *sockets) closeUnclaimed(log *slog.Logger) {
	for key, ln := range k.inherited {
		log.Info("inherited socket not in the configuration: closed", "socket", key)
		ln.Close()
	}
	k.inherited = nil
}

// listenTCP listens on addr, or claims the inherited socket for it.
func (k *sockets) listenTCP(addr string) (net.Listener, error) {
	if ln := k.claim(listenKey("tcp", addr)); ln != nil {
		return ln, nil
	}
	return net.Listen(tcpNetwork(addr), addr)
}

// open opens a pool's listener on spec, or claims the inherited one.
func (k *sockets) open(ctx context.Context, spec listenSpec) (net.Listener, error) {
	if ln := k.claim(listenKey(spec.network, spec.addr)); ln != nil {
		return ln, nil
	}
	return spec.open(ctx)
}

// gate returns the channel Server.Serving returns.
func (k *sockets) gate() chan struct{} {
	if k.accepting == nil {
		k.accepting = make(chan struct{})
	}
	return k.accepting
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

// remode applies the mode of a unix socket listen setting to the socket
// file of a kept listener.
func remode(listen string) error {
	l, err := parseListen(listen)
	if err != nil || !l.hasMode {
		return err
	}
	return os.Chmod(l.addr, l.mode)
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

// addrInUse reports whether another socket holds addr, TCP or UDP (a
// gossip member binds both).
func addrInUse(addr string) bool {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return errors.Is(err, syscall.EADDRINUSE)
	}
	ln.Close()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return errors.Is(err, syscall.EADDRINUSE)
	}
	pc.Close()
	return false
}
