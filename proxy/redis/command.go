package redis

import (
	"strconv"
	"strings"
)

// Class says how a proxy handles a command.
type Class uint8

// The classes of commands.
const (
	// ClassSingle commands have one key and go to its server.
	ClassSingle Class = iota + 1
	// ClassSplit commands (MGET, MSET, DEL, UNLINK, EXISTS, TOUCH) take
	// many keys, each on its own: they are split into one request per
	// server and the replies merged, as nutcracker does (see [Merge]).
	ClassSplit
	// ClassSameServer commands take several keys that must all be on one
	// server (SINTER, RENAME, EVAL, ZUNIONSTORE, ...); they are refused
	// with [ErrCrossServer] otherwise.
	ClassSameServer
	// ClassAnyServer commands touch no key and may go to any one server
	// (COMMAND, LOLWUT, OBJECT HELP).
	ClassAnyServer
	// ClassLocal commands are answered by the proxy itself: PING, ECHO,
	// QUIT, SELECT, AUTH, HELLO (see [AppendLocal] and [AppendAuth]), and
	// CLIENT for the client's own connection.
	ClassLocal
	// ClassRefused commands are refused with [ErrUnsupported], the
	// connection staying open: cluster and administration commands, and
	// what the proxy cannot serve for the reason [Command.Refusal] gives.
	ClassRefused
	// ClassTransaction commands (MULTI, EXEC, DISCARD, WATCH, UNWATCH)
	// hold state on the client's connection: a proxy serves them on a
	// server connection pinned to the client for the transaction, with
	// every key of the transaction on that server. A [Splitter] refuses
	// them, as a proxy without such connections must.
	ClassTransaction
	// ClassPubSub commands (SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, their
	// UNSUBSCRIBEs, PUBLISH, SPUBLISH, PUBSUB) are served by a proxy that
	// routes a channel as a key: a subscriber gets server connections of
	// its own. A [Splitter] refuses them.
	ClassPubSub
	// ClassBlocking commands (BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BZPOPMIN,
	// BZPOPMAX, BLMPOP, BZMPOP, XREAD and XREADGROUP) block until their
	// keys have something, up to their timeout (see [Request.BlockArg]):
	// a proxy serves them, when their keys are on one server, on a server
	// connection of their own; XREAD and XREADGROUP without BLOCK do not
	// block. A [Splitter] refuses them.
	ClassBlocking
	// ClassEveryServer commands (SCAN, KEYS, DBSIZE, SCRIPT) read the
	// whole keyspace or every server's scripts: a proxy asks every
	// server and merges the answers. A [Splitter] refuses them.
	ClassEveryServer
)

var classNames = [...]string{"", "single", "split", "same-server", "any-server", "local", "refused", "transaction", "pub/sub", "blocking", "every-server"}

// String returns the class's name.
func (c Class) String() string {
	if int(c) < len(classNames) && c > 0 {
		return classNames[c]
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// Merge says how the replies of a [ClassSplit] command's parts make the
// client's reply.
type Merge uint8

// The ways of merging.
const (
	MergeNone  Merge = iota
	MergeArray       // MGET: the arrays' elements, in the order of the client's keys
	MergeOK          // MSET: +OK when every part answered +OK
	MergeSum         // DEL, UNLINK, EXISTS, TOUCH: the integers summed
)

// Command is one entry of the command table: a command of redis 7.0, or a
// subcommand ("object|encoding"). Its fields are read through methods, as
// the table is shared. The containers whose subcommands take keys (OBJECT,
// XINFO, XGROUP, MEMORY) have an entry of their own, but a request's Cmd is
// always its subcommand's: the container alone fails its arity.
type Command struct {
	id                int // its row in the table, from 0
	name              string
	arity             int
	first, last, step int
	class             Class
	keys              finder
	merge             Merge
	why               reason
	readOnly          bool
	subs              map[string]*Command // subcommands of a container the proxy looks into

	refused  *Error // the replies that name the command, built once
	crossSrv *Error
	noKeys   *Error
}

// Name returns the command's name in lower case, "container|sub" for a
// subcommand, as redis-server names it in errors and COMMAND INFO.
func (c *Command) Name() string { return c.name }

// ID returns the command's number, from 0 to [NumCommands]-1: a
// subcommand has one of its own.
func (c *Command) ID() int { return c.id }

// NumCommands returns the number of commands in the table, subcommands
// included.
func NumCommands() int { return len(specs) }

// CommandByID returns the command whose [Command.ID] is id, or nil.
func CommandByID(id int) *Command {
	if id < 0 || id >= len(byID) {
		return nil
	}
	return byID[id]
}

// Arity returns the number of arguments, the name included, as COMMAND
// INFO gives it: n means exactly n, -n at least n.
func (c *Command) Arity() int { return c.arity }

// KeyRange returns the first key's index, the last key's (negative: from
// the end, -1 the last argument) and the step between keys, as COMMAND
// INFO gives them; all zero for a command without keys or whose keys
// move (see [Command.Movable]).
func (c *Command) KeyRange() (first, last, step int) { return c.first, c.last, c.step }

// Movable reports whether the command's keys are found by reading its
// arguments (a numkeys argument, a STORE option) rather than by
// [Command.KeyRange] alone.
func (c *Command) Movable() bool { return c.keys != keysRange }

// ReadOnly reports whether the command only reads its keys, as
// redis-server flags it readonly; every other command may change them.
func (c *Command) ReadOnly() bool { return c.readOnly }

// Class returns how a proxy handles the command.
func (c *Command) Class() Class { return c.class }

// Refusal returns the reply that refuses the command, "-ERR '<cmd>' is not
// supported by the proxy: <why>", for a [ClassRefused] command and for one
// a proxy serves only on a connection of the client's own; nil for others.
func (c *Command) Refusal() *Error { return c.refused }

// Merge returns how the replies of a [ClassSplit] command merge;
// MergeNone for other classes.
func (c *Command) Merge() Merge { return c.merge }

// Lookup returns the table's entry for a command name (any case), or nil.
// Subcommands are named "container|sub".
func Lookup(name string) *Command {
	if parent, sub, ok := strings.Cut(name, "|"); ok {
		c := lookup([]byte(parent))
		if c == nil {
			return nil
		}
		return c.sub([]byte(sub))
	}
	return lookup([]byte(name))
}

// maxName is the longest command name in the table, with room to spare.
const maxName = 32

// lookup finds a command by its name in any case without allocating.
func lookup(name []byte) *Command {
	var lower [maxName]byte
	if len(name) > len(lower) {
		return nil
	}
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	return table[string(lower[:len(name)])]
}

// sub finds a subcommand of c by name in any case.
func (c *Command) sub(name []byte) *Command {
	if c.subs == nil {
		return nil
	}
	var lower [maxName]byte
	if len(name) > len(lower) {
		return nil
	}
	for i, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		lower[i] = ch
	}
	return c.subs[string(lower[:len(name)])]
}

// resolve looks up req's command, checks its arity as redis-server does,
// and finds its keys.
func resolve(req *Request) error {
	cmd := lookup(req.Args[0])
	if cmd == nil {
		if isHTTP(req.Args[0]) {
			return errCrossProtoHTTP
		}
		return unknownCommand(req.Args)
	}
	if cmd.subs != nil && len(req.Args) > 1 {
		sub := cmd.sub(req.Args[1])
		if sub == nil {
			return unknownSubcommand(req.Args)
		}
		cmd = sub
	}
	req.Cmd = cmd
	n := len(req.Args)
	if (cmd.arity > 0 && n != cmd.arity) || n < -cmd.arity {
		return arityError(cmd)
	}
	switch cmd.class {
	case ClassSingle, ClassSplit, ClassSameServer, ClassTransaction, ClassBlocking:
		return findKeys(req)
	}
	return nil
}

// isHTTP reports whether name is "POST" or "Host:", which redis-server
// takes for a cross-protocol attack: it closes the connection unanswered.
func isHTTP(name []byte) bool {
	return equalFold(name, "post") || equalFold(name, "host:")
}

func arityError(cmd *Command) *Error {
	return replyError(ErrArity, "ERR wrong number of arguments for '"+cmd.name+"' command", false)
}

// unknownCommand returns redis-server's reply to an unknown command: its
// name and the start of its arguments, each cut at a NUL byte as the
// server's C formatting cuts it, 128 bytes at most.
func unknownCommand(args [][]byte) *Error {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.Write(cString(args[0], 128))
	b.WriteString("', with args beginning with: ")
	n := 0
	for _, a := range args[1:] {
		if n >= 128 {
			break
		}
		s := cString(a, 128-n)
		b.WriteByte('\'')
		b.Write(s)
		b.WriteString("' ")
		n += len(s) + 3
	}
	return replyError(ErrUnknownCommand, b.String(), false)
}

// unknownSubcommand returns redis-server's reply to an unknown subcommand.
func unknownSubcommand(args [][]byte) *Error {
	msg := "ERR unknown subcommand '" + string(cString(args[1], 128)) + "'. Try " +
		asciiUpper(cString(args[0], len(args[0]))) + " HELP."
	return replyError(ErrUnknownSubcommand, msg, false)
}

// cString returns b as C's "%.*s" prints it: up to the first NUL, at most
// max bytes.
func cString(b []byte, max int) []byte {
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) > max {
		b = b[:max]
	}
	return b
}
