package redis

import (
	"bytes"
	"strconv"
)

// Proto is the version of the protocol a client speaks: [RESP2], which
// every client starts with, or [RESP3], which it asks for with HELLO 3.
// The Append functions that take one write the type the client reads,
// as redis-server's addReply functions do.
type Proto uint8

// The protocol versions HELLO selects.
const (
	RESP2 Proto = 2
	RESP3 Proto = 3
)

// AppendNull appends the null a command answers for a missing value:
// RESP2's nil bulk string "$-1\r\n", RESP3's "_\r\n".
func AppendNull(dst []byte, p Proto) []byte {
	if p == RESP3 {
		return append(dst, "_\r\n"...)
	}
	return AppendNil(dst)
}

// AppendNullArray appends the null of a command whose reply is an array
// (EXEC when a watched key changed, BLPOP timed out): RESP2's "*-1\r\n",
// RESP3's "_\r\n".
func AppendNullArray(dst []byte, p Proto) []byte {
	if p == RESP3 {
		return append(dst, "_\r\n"...)
	}
	return AppendArrayHeader(dst, -1)
}

// AppendMapHeader appends the header of a map of n pairs, its keys and
// values following in turn: RESP3's "%n\r\n", and in RESP2 an array of
// 2n elements, as redis-server's addReplyMapLen writes them.
func AppendMapHeader(dst []byte, n int, p Proto) []byte {
	if p == RESP3 {
		return appendLength(dst, '%', n)
	}
	return AppendArrayHeader(dst, 2*n)
}

// AppendPushHeader appends the header of an out-of-band message of n
// elements (pub/sub's messages and confirmations): RESP3's ">n\r\n", an
// array in RESP2.
func AppendPushHeader(dst []byte, n int, p Proto) []byte {
	if p == RESP3 {
		return appendLength(dst, '>', n)
	}
	return AppendArrayHeader(dst, n)
}

// AppendVerbatim appends text as RESP3's verbatim string of format "txt"
// ("=len\r\ntxt:text\r\n"), which INFO and CLIENT INFO answer, and as a
// bulk string in RESP2.
func AppendVerbatim(dst []byte, text string, p Proto) []byte {
	if p != RESP3 {
		return AppendBulkString(dst, text)
	}
	dst = appendLength(dst, '=', len(text)+4)
	dst = append(dst, "txt:"...)
	dst = append(dst, text...)
	return append(dst, '\r', '\n')
}

func appendLength(dst []byte, kind byte, n int) []byte {
	dst = append(dst, kind)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

// Hello is a HELLO request, parsed: HELLO [protover [AUTH username
// password] [SETNAME clientname]].
type Hello struct {
	// Proto is the version asked for; 0 when none was given, which
	// keeps the client's.
	Proto Proto
	// Auth is set when AUTH was given, with User and Pass.
	Auth       bool
	User, Pass []byte
	// SetName is set when SETNAME was given, with Name.
	SetName bool
	Name    []byte
}

// ParseHello parses HELLO as redis-server 7.0 does, and returns the error
// reply the server gives when it cannot: a version that is not 2 or 3
// ("-NOPROTO unsupported protocol version"), not an integer, or an option
// it does not know.
func ParseHello(req *Request) (Hello, []byte) {
	var h Hello
	args := req.Args
	if len(args) < 2 {
		return h, nil
	}
	v, ok := parseInt(args[1])
	switch {
	case !ok:
		return h, AppendError(nil, "ERR Protocol version is not an integer or out of range")
	case v != 2 && v != 3:
		return h, AppendError(nil, "NOPROTO unsupported protocol version")
	}
	h.Proto = Proto(v)
	for j := 2; j < len(args); j++ {
		more := len(args) - 1 - j
		switch opt := args[j]; {
		case bytes.EqualFold(opt, []byte("auth")) && more >= 2:
			h.Auth, h.User, h.Pass = true, args[j+1], args[j+2]
			j += 2
		case bytes.EqualFold(opt, []byte("setname")) && more >= 1:
			h.SetName, h.Name = true, args[j+1]
			j++
		default:
			return h, AppendError(nil, "ERR Syntax error in HELLO option '"+string(opt)+"'")
		}
	}
	return h, nil
}

// ValidClientName reports whether name may name a client, as
// redis-server's CLIENT SETNAME checks it: no character below '!' or
// above '~' (no space, no line end).
func ValidClientName(name []byte) bool {
	for _, c := range name {
		if c < '!' || c > '~' {
			return false
		}
	}
	return true
}

// BadClientName is redis-server's reply to a client name
// [ValidClientName] refuses.
const BadClientName = "-ERR Client names cannot contain spaces, newlines or special characters.\r\n"
