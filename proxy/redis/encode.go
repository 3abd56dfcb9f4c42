package redis

import "strconv"

// AppendArrayHeader appends an array header "*n\r\n" and returns the
// extended slice; a negative n gives the nil array "*-1\r\n".
func AppendArrayHeader(dst []byte, n int) []byte {
	if n < 0 {
		return append(dst, "*-1\r\n"...)
	}
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

// AppendBulk appends b as a bulk string, "$len\r\nb\r\n".
func AppendBulk(dst, b []byte) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(b)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// AppendBulkString appends s as a bulk string.
func AppendBulkString(dst []byte, s string) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// AppendNil appends the nil bulk string "$-1\r\n", RESP2's null.
func AppendNil(dst []byte) []byte { return append(dst, "$-1\r\n"...) }

// AppendInt appends the integer reply ":n\r\n".
func AppendInt(dst []byte, n int64) []byte {
	dst = append(dst, ':')
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, '\r', '\n')
}

// AppendSimpleString appends the simple string "+s\r\n". A CR or LF in s
// becomes a space, as redis-server makes them in its own status replies:
// a simple string cannot hold a line end.
func AppendSimpleString(dst []byte, s string) []byte {
	dst = append(dst, '+')
	dst = appendLine(dst, s)
	return append(dst, '\r', '\n')
}

// AppendOK appends "+OK\r\n".
func AppendOK(dst []byte) []byte { return append(dst, "+OK\r\n"...) }

// AppendError appends the error reply "-msg\r\n". msg starts with an error
// code ("ERR", "WRONGTYPE", ...); CR and LF in it become spaces, as
// redis-server makes them.
func AppendError(dst []byte, msg string) []byte {
	dst = append(dst, '-')
	dst = appendLine(dst, msg)
	return append(dst, '\r', '\n')
}

// appendLine appends s with each CR and LF made a space.
func appendLine(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return dst
}

// AppendArgs appends a request of args as servers take it, an array of
// bulk strings.
func AppendArgs(dst []byte, args [][]byte) []byte {
	dst = AppendArrayHeader(dst, len(args))
	for _, a := range args {
		dst = AppendBulk(dst, a)
	}
	return dst
}

// AppendRequest appends req as servers take it: an array of bulk strings,
// whether the client sent it so or as an inline command.
func AppendRequest(dst []byte, req *Request) []byte { return AppendArgs(dst, req.Args) }
