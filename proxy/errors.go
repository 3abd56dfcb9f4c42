package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// The proxy's errors. A client never reads their text as it is: the reply
// it gets for a failed request is derived from the error by its front
// (appendErrorReply, appendRedisError, both by appendReplyCause), in
// nutcracker's words for a server's failure and without the server's
// address, which only the log says.
var (
	// ErrServerClosed is returned by [Server.Start] and [Server.Reload] after
	// [Server.Shutdown].
	ErrServerClosed = errors.New("proxy: server closed")
	// ErrBadConfig is wrapped by every configuration error; see
	// [ConfigError].
	ErrBadConfig = errors.New("proxy: bad config")
	// ErrUnknownKey is the [ConfigError.Err] of a key that is neither
	// nutcracker's nor kolco's.
	ErrUnknownKey = errors.New("proxy: unknown key")
	// ErrNotSocket is the error for a unix socket listen path that names
	// a file that is not a socket.
	ErrNotSocket = errors.New("proxy: exists and is not a socket")

	// ErrServerDown is the cause of a request to a server that is marked
	// down (ejected, or fail-fast) while it waits to be restored.
	ErrServerDown = errors.New("proxy: server down")
	// ErrTimeout is the cause of a request to a server that did not
	// connect or answer within the pool's timeout.
	ErrTimeout = errors.New("proxy: timeout")
	// ErrConnLost is the cause of a request whose connection to the server
	// ended before it could be written or answered.
	ErrConnLost = errors.New("proxy: connection lost")
	// ErrNoRoom is the cause of a request, or a reply's value, that the
	// buffer limits (kolco.buffer_limit, client_buffer_limit) have no room
	// for in time.
	ErrNoRoom = errors.New("proxy: no room in the buffer limits")
	// ErrNoServers is the error for a request to a pool whose servers are
	// all ejected.
	ErrNoServers = errors.New("proxy: no live servers")
	// ErrPoolClosed is the error for a request to a pool being shut down.
	ErrPoolClosed = errors.New("proxy: pool closed")
	// ErrPoolRemoved is the error for a request read from a client of a
	// pool that a reload removed; the client is then closed.
	ErrPoolRemoved = errors.New("proxy: pool removed")
	// ErrTooManyConns is the error for a client over the pool's
	// max_client_connections; it is closed.
	ErrTooManyConns = errors.New("proxy: too many open connections")
	// ErrFlushAllRefused is the error for flush_all in a pool that does
	// not broadcast it.
	ErrFlushAllRefused = errors.New("proxy: flush_all is refused by this proxy (set flush_all: broadcast)")
	// ErrCasReplicas is the error for cas, or a meta write with the C
	// flag, in a pool with replicas.
	ErrCasReplicas = errors.New("proxy: cas is not supported in a pool with replicas: each copy has its own cas value")
	// ErrStatsArgs is the error for stats with an argument other than
	// "proxy" (items, slabs, settings, ...): those describe one server,
	// and the proxy's own figures in their place would be a wrong answer.
	ErrStatsArgs = errors.New("proxy: the proxy answers stats (its own figures) only; ask the servers for stats")
	// ErrServerLoading is the cause of a Redis server's failure while it
	// answers -LOADING: it restarted and is reading its data, and is
	// treated as down until it is ready.
	ErrServerLoading = errors.New("proxy: server loading its data")
	// ErrRedisHandshake is the cause of a failed connect to a Redis
	// server that refused the SELECT of redis_db the proxy sends first.
	ErrRedisHandshake = errors.New("proxy: server refused the connection's SELECT")
	// ErrBadStateFile is wrapped by the error for a state file
	// (kolco.state_file) that cannot be read as one, or that records a
	// pool over other servers than the configuration's, or a placement it
	// does not restore.
	ErrBadStateFile = errors.New("proxy: state file refused")
)

// ConfigError is a configuration that cannot be served: the pool and key
// at fault, and why. It wraps [ErrBadConfig] and Err.
type ConfigError struct {
	// Pool is the pool at fault; empty for the proxy-wide settings and the
	// file as a whole.
	Pool string
	// Key is the setting at fault, as the file spells it ("timeout",
	// "health_check.interval", "kolco.log_level"); empty for the file as a
	// whole.
	Key string
	// Line is the file's line at fault, from 1; 0 when not known.
	Line int
	// Err says why; it may wrap a cause, such as [ErrUnknownKey] or
	// keyhash.ErrUnknown.
	Err error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString(ErrBadConfig.Error())
	b.WriteString(": ")
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Pool != "" {
		fmt.Fprintf(&b, "pool %q: ", e.Pool)
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(withoutPrefix(e.Err))
	return b.String()
}

// Unwrap returns [ErrBadConfig] and Err.
func (e *ConfigError) Unwrap() []error { return []error{ErrBadConfig, e.Err} }

// ServerError is a request's failure at one server of a pool. It wraps
// its cause, so that errors.Is finds [ErrTimeout], [ErrServerDown],
// [ErrConnLost], a [memcache] reply error or a system error such as
// syscall.ECONNREFUSED.
type ServerError struct {
	// Addr is the server's address, as the pool's servers give it.
	Addr string
	// Op is "connect" for a failed connect, else empty.
	Op string
	// Err is the cause.
	Err error
}

// serverError returns the failure of a request at addr, with a timeout of
// the network as [ErrTimeout].
func serverError(addr, op string, err error) *ServerError {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		err = ErrTimeout
	}
	return &ServerError{Addr: addr, Op: op, Err: err}
}

func (e *ServerError) Error() string { return "proxy: " + string(e.appendText(nil)) }

// Unwrap returns the cause.
func (e *ServerError) Unwrap() error { return e.Err }

// appendText appends "addr: [op: ]cause", the cause as short as it can be
// said: the system's words for a system error ("connection refused", not
// "dial tcp ...: connect: connection refused"), which name the failed
// call only when Op does not.
func (e *ServerError) appendText(dst []byte) []byte {
	dst = append(dst, e.Addr...)
	dst = append(dst, ": "...)
	if e.Op != "" {
		dst = append(dst, e.Op...)
		dst = append(dst, ": "...)
	}
	var se *os.SyscallError
	var oe *net.OpError
	switch {
	case errors.As(e.Err, &se) && se.Syscall == e.Op:
		return append(dst, se.Err.Error()...)
	case errors.As(e.Err, &se):
		return append(dst, se.Error()...)
	case errors.As(e.Err, &oe) && oe.Err != nil:
		return append(dst, oe.Err.Error()...)
	}
	return append(dst, withoutPrefix(e.Err)...)
}

// withoutPrefix returns the text of err without this package's prefix,
// for a message that has said it already, or a client, who need not read it.
func withoutPrefix(err error) string {
	return strings.TrimPrefix(err.Error(), "proxy: ")
}

// appendReplyCause appends what a client reads after SERVER_ERROR or -ERR
// for a request that failed with err. For a server's failure it is what
// nutcracker 0.5.0 answers, word for word, since alerts and client code
// match on it: the C library's text for the error number ("Connection
// refused", "Connection timed out", "Connection reset by peer"), "unknown"
// for a server that closed the connection, and "Connection refused" for a
// key whose server is marked down (nutcracker's answer when no live server
// is left). The server's address is never in it: a client has no use for
// the pool's topology, and the log names the server. A failure nutcracker
// cannot have (a limit of kolco's) is said in kolco's words.
func appendReplyCause(dst []byte, err error) []byte {
	var se *ServerError
	if !errors.As(err, &se) {
		if errors.Is(err, ErrNoServers) {
			return append(dst, "Connection refused"...)
		}
		return append(dst, withoutPrefix(err)...)
	}
	var errno syscall.Errno
	var dns *net.DNSError
	switch {
	case errors.Is(se.Err, ErrTimeout):
		return append(dst, "Connection timed out"...)
	case errors.Is(se.Err, ErrServerDown):
		return append(dst, "Connection refused"...)
	case errors.As(se.Err, &errno):
		return appendCapitalized(dst, errno.Error())
	case errors.As(se.Err, &dns):
		// nutcracker's answer for a server whose name does not resolve.
		return append(dst, "Host is down"...)
	case errors.Is(se.Err, io.EOF), errors.Is(se.Err, io.ErrUnexpectedEOF), errors.Is(se.Err, ErrConnLost),
		errors.Is(se.Err, net.ErrClosed):
		// nutcracker's strerror of no error number: the server closed, or
		// the proxy closed the connection with the request on it.
		return append(dst, "unknown"...)
	case errors.Is(se.Err, errTLSHandshake):
		return append(dst, errTLSHandshake.Error()...)
	}
	var oe *net.OpError
	var sys *os.SyscallError
	if errors.As(se.Err, &oe) || errors.As(se.Err, &sys) {
		// The network's failure of no error number: Go's words name the
		// connection's addresses, which a client is never told.
		return append(dst, "unknown"...)
	}
	return append(dst, withoutPrefix(se.Err)...)
}

// errTLSHandshake is the cause of a failed connect to a server over TLS;
// a client reads it alone, without the certificate's names and the
// addresses the log gives.
var errTLSHandshake = errors.New("TLS handshake failed")

// appendCapitalized appends s with its first letter upper-cased: Go's
// texts for error numbers are the C library's with the first letter
// lowered ("connection refused" for "Connection refused").
func appendCapitalized(dst []byte, s string) []byte {
	r, n := utf8.DecodeRuneInString(s)
	return append(utf8.AppendRune(dst, unicode.ToUpper(r)), s[n:]...)
}
