package redis

import (
	"bytes"
	"fmt"
)

// ParseScan parses the reply to SCAN: an array of the cursor to go on
// from and the array of keys. The keys point into reply.
func ParseScan(reply []byte) (cursor []byte, keys [][]byte, err error) {
	bad := func(what string) error { return fmt.Errorf("%w: SCAN's reply: %s", ErrBadReply, what) }
	n, rest, ok := arrayHeader(reply)
	if !ok || n != 2 {
		return nil, nil, bad("not an array of two")
	}
	cursor, rest, ok = bulkAt(rest)
	if !ok {
		return nil, nil, bad("no cursor")
	}
	if n, rest, ok = arrayHeader(rest); !ok {
		return nil, nil, bad("no array of keys")
	}
	if int64(len(rest)) < 4*n {
		return nil, nil, bad("fewer keys than it says")
	}
	keys = make([][]byte, 0, n)
	for range n {
		var k []byte
		if k, rest, ok = bulkAt(rest); !ok {
			return nil, nil, bad("a key that is not a bulk string")
		}
		keys = append(keys, k)
	}
	if len(rest) != 0 {
		return nil, nil, bad("bytes after the keys")
	}
	return cursor, keys, nil
}

// arrayHeader reads "*<n>\r\n" at the start of b, n >= 0.
func arrayHeader(b []byte) (n int64, rest []byte, ok bool) {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 2 || b[0] != '*' {
		return 0, nil, false
	}
	if n, ok = parseInt(b[1:i]); !ok || n < 0 {
		return 0, nil, false
	}
	return n, b[i+2:], true
}

// bulkAt reads the bulk string "$<n>\r\n<n bytes>\r\n" at the start of b.
func bulkAt(b []byte) (data, rest []byte, ok bool) {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 2 || b[0] != '$' {
		return nil, nil, false
	}
	n, ok := parseInt(b[1:i])
	if !ok || n < 0 || int64(len(b)-i-2) < n+2 {
		return nil, nil, false
	}
	end := i + 2 + int(n)
	if b[end] != '\r' || b[end+1] != '\n' {
		return nil, nil, false
	}
	return b[i+2 : end], b[end+2:], true
}
