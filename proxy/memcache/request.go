package memcache

import (
	"errors"
	"fmt"
)

// Command is a request's command.
type Command uint8

// The commands this package knows. CmdUnknown is never returned by a
// successful read.
const (
	CmdUnknown Command = iota
	CmdGet
	CmdGets
	CmdGat
	CmdGats
	CmdSet
	CmdAdd
	CmdReplace
	CmdAppend
	CmdPrepend
	CmdCas
	CmdDelete
	CmdIncr
	CmdDecr
	CmdTouch
	CmdVersion
	CmdQuit
	CmdFlushAll
	CmdStats
	CmdVerbosity
	CmdMetaGet        // mg
	CmdMetaSet        // ms
	CmdMetaDelete     // md
	CmdMetaArithmetic // ma
	CmdMetaNoop       // mn
	CmdMetaDebug      // me
)

var commandNames = [...]string{
	CmdUnknown: "unknown", CmdGet: "get", CmdGets: "gets", CmdGat: "gat", CmdGats: "gats",
	CmdSet: "set", CmdAdd: "add", CmdReplace: "replace", CmdAppend: "append",
	CmdPrepend: "prepend", CmdCas: "cas", CmdDelete: "delete", CmdIncr: "incr",
	CmdDecr: "decr", CmdTouch: "touch", CmdVersion: "version", CmdQuit: "quit",
	CmdFlushAll: "flush_all", CmdStats: "stats", CmdVerbosity: "verbosity",
	CmdMetaGet: "mg", CmdMetaSet: "ms", CmdMetaDelete: "md", CmdMetaArithmetic: "ma",
	CmdMetaNoop: "mn", CmdMetaDebug: "me",
}

// String returns the command as it is spelled on the wire.
func (c Command) String() string {
	if int(c) < len(commandNames) {
		return commandNames[c]
	}
	return "unknown"
}

// IsRetrieval reports whether c is get, gets, gat or gats: the commands that
// take many keys and answer with VALUE entries and END.
func (c Command) IsRetrieval() bool { return c >= CmdGet && c <= CmdGats }

// IsStorage reports whether c is followed by a data block: set, add,
// replace, append, prepend, cas and ms.
func (c Command) IsStorage() bool { return (c >= CmdSet && c <= CmdCas) || c == CmdMetaSet }

// IsMeta reports whether c is a meta command.
func (c Command) IsMeta() bool { return c >= CmdMetaGet && c <= CmdMetaDebug }

// Request is one parsed request. Its slices point into memory the Request
// owns, so they stay valid while the Reader reads other requests into other
// Requests, until the next read into the same Request.
type Request struct {
	// Cmd is the command.
	Cmd Command
	// Keys are the keys as sent (base64 text for a meta key with the b
	// flag). Retrievals have one or more, other keyed commands exactly one.
	Keys [][]byte
	// Flags is the client flags word of a storage command.
	Flags uint32
	// Exptime is the expiry of a storage command, gat, gats or touch.
	Exptime int64
	// Cas is the compare-and-swap value of cas.
	Cas uint64
	// Delta is the amount of incr and decr.
	Delta uint64
	// Noreply is set when the client asked for no reply (noreply, or the
	// meta q flag).
	Noreply bool
	// Data is the data block of a storage command, without its \r\n.
	Data []byte
	// Args holds the remaining tokens: the meta flags (without q), the
	// arguments of stats, flush_all and verbosity.
	Args [][]byte
	// Base64 is set for a meta request whose key is base64 (flag b).
	Base64 bool

	keybuf []byte // decoded base64 key
	line   []byte // the command line, which Keys and Args point into
}

// Key returns the i-th key as bytes to hash: the decoded key when the meta b
// flag is set.
func (r *Request) Key(i int) []byte {
	if r.Base64 && i == 0 && r.keybuf != nil {
		return r.keybuf
	}
	return r.Keys[i]
}

// Sentinel errors, wrapped by [*Error].
var (
	// ErrUnknownCommand is the error for a command this package does not know;
	// memcached answers it with ERROR.
	ErrUnknownCommand = errors.New("memcache: unknown command")
	// ErrBadCommand is the error for a malformed command line.
	ErrBadCommand = errors.New("memcache: bad command line format")
	// ErrKeyTooLong is the error for a key longer than [MaxKeyLen].
	ErrKeyTooLong = errors.New("memcache: key too long")
	// ErrTooLarge is the error for a data block over the value size limit.
	ErrTooLarge = errors.New("memcache: object too large for cache")
	// ErrBadDataChunk is the error for a data block not followed by \r\n.
	ErrBadDataChunk = errors.New("memcache: bad data chunk")
	// ErrLineTooLong is the error for a command line over the line limit.
	ErrLineTooLong = errors.New("memcache: line too long")
	// ErrBadReply is the error for a server reply that does not parse.
	ErrBadReply = errors.New("memcache: bad reply from server")
	// ErrNoRoom is the error for a data block or a line that a [Budget]
	// refused: memcached answers a request it has no memory for with
	// SERVER_ERROR out of memory.
	ErrNoRoom = errors.New("memcache: no room")
	// ErrValueTooLarge is the error for a reply carrying a value over the
	// reader's limit. The value is read and dropped: the stream stays in
	// step.
	ErrValueTooLarge = errors.New("value too large for the proxy")
)

// Error is a protocol error with the reply the client should get.
type Error struct {
	// Err is one of the sentinel errors of this package.
	Err error
	// Reply is the line to send back, with its \r\n.
	Reply string
	// Close is set when the stream cannot be resynchronised and the
	// connection must be closed after Reply is sent.
	Close bool
}

// Error returns the reply without its line end.
func (e *Error) Error() string { return fmt.Sprintf("%v (%q)", e.Err, e.Reply) }

// Unwrap returns the sentinel error.
func (e *Error) Unwrap() error { return e.Err }

func clientError(err error, msg string) *Error {
	return &Error{Err: err, Reply: "CLIENT_ERROR " + msg + "\r\n"}
}
