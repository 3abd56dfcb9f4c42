package redis

import (
	"crypto/subtle"
	"math"
)

// AppendLocal appends the proxy's own reply to a [ClassLocal] command other
// than AUTH (see [AppendAuth]), and reports whether the connection is to
// be closed once it is sent (QUIT). The replies are redis-server's, for a
// server with one database and no RESP3:
//   - PING: +PONG, or its argument as a bulk string;
//   - ECHO: its argument;
//   - QUIT: +OK, then the connection closes;
//   - SELECT 0: +OK; any other database: "-ERR DB index is out of range",
//     as a server with one database answers;
//   - HELLO: the error a server older than Redis 6 answers, "unknown
//     command", so that a client asking for RESP3 (go-redis v9, Lettuce)
//     falls back to RESP2, for a caller that speaks only RESP2 (a proxy
//     that speaks RESP3 answers HELLO itself: see [ParseHello]).
//
// CLIENT, which acts on the client's connection, is the caller's to
// answer; here it gets an error.
func AppendLocal(dst []byte, req *Request) ([]byte, bool) {
	args := req.Args
	switch req.Cmd.name {
	case "ping":
		switch len(args) {
		case 1:
			return append(dst, "+PONG\r\n"...), false
		case 2:
			return AppendBulk(dst, args[1]), false
		}
		return append(dst, arityError(req.Cmd).Reply...), false
	case "echo":
		return AppendBulk(dst, args[1]), false
	case "quit":
		return AppendOK(dst), true
	case "select":
		return appendSelect(dst, args[1]), false
	case "hello":
		return append(dst, unknownCommand(args).Reply...), false
	}
	return append(dst, errLocal.Reply...), false
}

// appendSelect answers SELECT as redis-server does with one database.
func appendSelect(dst, db []byte) []byte {
	n, ok := parseInt(db)
	switch {
	case !ok:
		return AppendError(dst, "ERR value is not an integer or out of range")
	case n < math.MinInt32 || n > math.MaxInt32:
		return AppendError(dst, "ERR value is out of range, value must between -2147483648 and 2147483647")
	case n != 0:
		return AppendError(dst, "ERR DB index is out of range")
	}
	return AppendOK(dst)
}

// NoAuth is redis-server's reply to a command from a client that has not
// authenticated when a password is required.
const NoAuth = "-NOAUTH Authentication required.\r\n"

// AppendAuth appends redis-server 7.0's reply to AUTH for a server whose
// default user has password (none when empty), and reports whether the
// client is now authenticated. "AUTH password" and "AUTH default
// password" are accepted; the comparison takes the same time whatever the
// password given.
func AppendAuth(dst []byte, req *Request, password string) ([]byte, bool) {
	args := req.Args
	var user, pass []byte
	switch len(args) {
	case 2:
		pass = args[1]
	case 3:
		user, pass = args[1], args[2]
	default:
		return AppendError(dst, "ERR syntax error"), false
	}
	if password == "" {
		if user != nil {
			// A named user with no password set: only "default" exists,
			// and it takes any password.
			if string(user) == "default" {
				return AppendOK(dst), true
			}
			return append(dst, wrongPass...), false
		}
		return AppendError(dst, "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"), false
	}
	same := subtle.ConstantTimeCompare(pass, []byte(password)) == 1
	if (user == nil || string(user) == "default") && same {
		return AppendOK(dst), true
	}
	return append(dst, wrongPass...), false
}

const wrongPass = "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
