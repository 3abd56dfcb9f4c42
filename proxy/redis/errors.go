package redis

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Protocol errors come wrapped in an [*Error] that says
// what to reply; reply-side errors are wrapped with fmt.Errorf.
var (
	// ErrProtocol is the error for request bytes that are not RESP: a bad
	// array or bulk length, a missing '$', unbalanced quotes in an inline
	// command. redis-server answers "-ERR Protocol error: ..." and closes
	// the connection, and so must the proxy: the stream cannot be
	// resynchronised.
	ErrProtocol = errors.New("redis: protocol error")
	// ErrLineTooLong is the error for an inline command or a length line
	// longer than [Limits.MaxLine]. The connection must be closed.
	ErrLineTooLong = errors.New("redis: line too long")
	// ErrBulkTooLarge is the error for a bulk string longer than
	// [Limits.MaxBulk]. The connection must be closed.
	ErrBulkTooLarge = errors.New("redis: bulk string too large")
	// ErrTooManyArgs is the error for a request of more than
	// [Limits.MaxArgs] arguments. The connection must be closed.
	ErrTooManyArgs = errors.New("redis: too many arguments")
	// ErrRequestTooLarge is the error for a request of more than
	// [Limits.MaxRequest] bytes. The connection must be closed.
	ErrRequestTooLarge = errors.New("redis: request too large")
	// ErrCrossProtocol is the error for an HTTP request sent to a RESP
	// port ("POST" or "Host:" as a command): redis-server closes the
	// connection without a reply, as a defence against cross-protocol
	// scripting, and so does the proxy.
	ErrCrossProtocol = errors.New("redis: HTTP request on a RESP connection")
	// ErrUnknownCommand is the error for a command redis 7.0 does not
	// have. The connection can go on.
	ErrUnknownCommand = errors.New("redis: unknown command")
	// ErrUnknownSubcommand is the error for an unknown subcommand of a
	// container command (OBJECT, XINFO, XGROUP, MEMORY). The connection
	// can go on.
	ErrUnknownSubcommand = errors.New("redis: unknown subcommand")
	// ErrArity is the error for a command with the wrong number of
	// arguments. The connection can go on.
	ErrArity = errors.New("redis: wrong number of arguments")
	// ErrNumKeys is the error for a command whose numkeys argument (EVAL,
	// ZUNIONSTORE, SINTERCARD, LMPOP, ...) is not a valid count of the
	// keys that follow. The connection can go on.
	ErrNumKeys = errors.New("redis: bad number of keys")
	// ErrUnsupported is the error for a command the proxy refuses
	// (transactions, blocking commands, pub/sub, ...). The connection can
	// go on.
	ErrUnsupported = errors.New("redis: command not supported by the proxy")
	// ErrCrossServer is the error for a multi-key command whose keys do
	// not all map to one server, where the command cannot be split. The
	// connection can go on.
	ErrCrossServer = errors.New("redis: keys map to different servers")
	// ErrNoKeys is the error for a keyed command given no key (EVAL with
	// numkeys 0): the proxy has no server to send it to. The connection
	// can go on.
	ErrNoKeys = errors.New("redis: no key to route by")
	// ErrNoRoom is the error for a request, or a reply's bulk string,
	// that the [Budget] has no room for. Either is read to its end and
	// dropped: the stream stays in step.
	ErrNoRoom = errors.New("redis: no room in the proxy's buffers")
	// ErrLocal is the error for a command the proxy must answer itself
	// (PING, AUTH, ...) given to [Splitter.Split].
	ErrLocal = errors.New("redis: command answered by the proxy")

	// ErrBadReply is the error for server bytes that are not a RESP2
	// reply. After it the stream is out of step and the server
	// connection must be closed.
	ErrBadReply = errors.New("redis: bad reply from server")
	// ErrReplyTooLarge is the error for a reply over [ReplyLimits.MaxReply]
	// bytes or with a bulk string over [ReplyLimits.MaxBulk]. The reply is
	// read and dropped: the stream stays in step.
	ErrReplyTooLarge = errors.New("redis: reply too large for the proxy")
	// ErrReplyTooDeep is the error for a reply nesting arrays deeper than
	// [ReplyLimits.MaxDepth]. The reply is read and dropped: the stream
	// stays in step.
	ErrReplyTooDeep = errors.New("redis: reply nested too deep for the proxy")
)

// Error is an error in a client's request, with the reply the client
// should get.
type Error struct {
	// Err is one of the sentinel errors of this package.
	Err error
	// Reply is the whole reply to send, "-ERR ...\r\n". It is empty when
	// redis-server closes the connection without a reply
	// ([ErrCrossProtocol]).
	Reply string
	// Close is set when the stream cannot go on: the connection must be
	// closed once Reply is sent.
	Close bool
}

// Error returns the sentinel's text and the reply.
func (e *Error) Error() string {
	return fmt.Sprintf("%v (%q)", e.Err, strings.TrimSuffix(e.Reply, "\r\n"))
}

// Unwrap returns the sentinel error.
func (e *Error) Unwrap() error { return e.Err }

// replyError returns an Error whose reply is the error message msg
// ("ERR ..."), made safe as redis-server makes it: line ends inside the
// message become spaces.
func replyError(err error, msg string, close bool) *Error {
	return &Error{Err: err, Reply: string(AppendError(nil, msg)), Close: close}
}

// protocolError returns the closing error redis-server sends for a
// malformed request: "-ERR Protocol error: what".
func protocolError(err error, what string) *Error {
	return replyError(err, "ERR Protocol error: "+what, true)
}
