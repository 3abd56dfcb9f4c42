// Package metadump reads memcached's list of the items it holds: the
// reply to "lru_crawler metadump all" (memcached 1.4.31 and later, with
// the LRU crawler on, its default since 1.5), one line per item, such as
// (memcached 1.6.18)
//
//	key=user%3A42 exp=-1 la=1796277102 cas=7 fetch=yes cls=1 size=65
//
// with the key URL-encoded, the expiry as a Unix time (-1: none), the
// item's CAS value and its size in the server's memory (header, key and
// value), and a line "END" last. The planner reads it for the keys a
// server holds; the proxy's sweep for the copies a server should no
// longer hold, deleted by the CAS value listed.
package metadump

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Command is the request that lists every item of a server.
const Command = "lru_crawler metadump all\r\n"

// The errors of [ParseLine], [Reader.Next] and [List].
var (
	// ErrBad is wrapped by every error about a metadump reply: a
	// malformed line, or a reply other than the dump, such as the
	// server's "CLIENT_ERROR lru crawler disabled".
	ErrBad = errors.New("metadump: bad reply")
	// ErrBusy is returned for a server busy with another crawl
	// ("BUSY currently processing crawler request"); a later request may
	// succeed.
	ErrBusy = errors.New("metadump: memcached is busy with another crawl")
)

// Item is one item a memcached server holds.
type Item struct {
	// Key is the item's key, decoded.
	Key string
	// Size is the bytes the item takes in the server's memory.
	Size int64
	// Exp is the item's expiry as a Unix time; -1 means none.
	Exp int64
	// Cas is the item's CAS value; 0 when the line gives none.
	Cas uint64
}

// MaxLine bounds one line of a dump: a key of memcached's largest, 250
// bytes, takes 750 encoded, and the other fields well under 200.
const MaxLine = 4096

// ParseLine reads one line of a dump, without its line end. Fields are
// name=value pairs separated by spaces; key and size are needed, exp and
// cas are read when present (else -1 and 0), the others are ignored. The
// error wraps [ErrBad].
func ParseLine(line []byte) (Item, error) {
	it, hasKey, hasSize := Item{Exp: -1}, false, false
	for len(line) > 0 {
		f := line
		if i := bytes.IndexByte(line, ' '); i >= 0 {
			f, line = line[:i], line[i+1:]
		} else {
			line = nil
		}
		if len(f) == 0 {
			continue
		}
		name, value, ok := bytes.Cut(f, []byte{'='})
		if !ok {
			return Item{}, fmt.Errorf("%w: field %q is not name=value", ErrBad, f)
		}
		var err error
		switch string(name) {
		case "key":
			it.Key, err = unescapeKey(value)
			hasKey = true
		case "size":
			it.Size, err = strconv.ParseInt(string(value), 10, 64)
			if err == nil && it.Size < 0 {
				err = errors.New("negative")
			}
			hasSize = true
		case "exp":
			it.Exp, err = strconv.ParseInt(string(value), 10, 64)
		case "cas":
			it.Cas, err = strconv.ParseUint(string(value), 10, 64)
		}
		if err != nil {
			return Item{}, fmt.Errorf("%w: %s=%q: %v", ErrBad, name, value, err)
		}
	}
	if !hasKey || !hasSize {
		return Item{}, fmt.Errorf("%w: a line lacks key= or size=", ErrBad)
	}
	return it, nil
}

// unescapeKey decodes memcached's URL encoding of a key: %XX is the byte
// of hex value XX, every other byte stands for itself.
func unescapeKey(s []byte) (string, error) {
	if len(s) == 0 {
		return "", errors.New("empty key")
	}
	if bytes.IndexByte(s, '%') < 0 {
		return string(s), nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			out = append(out, s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", errors.New("truncated %-escape")
		}
		hi, lo := unhex(s[i+1]), unhex(s[i+2])
		if hi < 0 || lo < 0 {
			return "", fmt.Errorf("bad %%-escape %q", s[i:i+3])
		}
		out = append(out, byte(hi<<4|lo))
		i += 2
	}
	return string(out), nil
}

// unhex returns the value of a hex digit, or -1.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// Reader reads the items of one dump, one at a time, so that a server's
// millions of items need not all be held.
type Reader struct {
	br   *bufio.Reader
	line []byte
	end  bool
}

// NewReader returns a Reader of the dump br carries.
func NewReader(br *bufio.Reader) *Reader { return &Reader{br: br} }

// Next returns the next item, or io.EOF after the line "END". The error
// is [ErrBusy] when the server is busy with another crawl; it wraps
// [ErrBad] for a malformed line, a line longer than memcached writes, or
// any other one-line reply (the server's own error, such as
// "CLIENT_ERROR lru crawler disabled"); else it is the reader's own,
// io.ErrUnexpectedEOF for a reply cut short.
func (r *Reader) Next() (Item, error) {
	if r.end {
		return Item{}, io.EOF
	}
	line, err := r.readLine()
	if err != nil {
		return Item{}, err
	}
	switch {
	case string(line) == "END":
		r.end = true
		return Item{}, io.EOF
	case bytes.HasPrefix(line, []byte("key=")):
		return ParseLine(line)
	case bytes.HasPrefix(line, []byte("BUSY")):
		return Item{}, ErrBusy
	}
	if len(line) > 64 {
		line = line[:64]
	}
	return Item{}, fmt.Errorf("%w: the server answered %q", ErrBad, line)
}

// readLine returns the next line without its "\n" or "\r\n"; it is valid
// until the next call.
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		part, err := r.br.ReadSlice('\n')
		r.line = append(r.line, part...)
		if len(r.line) > MaxLine {
			return nil, fmt.Errorf("%w: a line is longer than %d bytes", ErrBad, MaxLine)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(r.line[:len(r.line)-1], []byte{'\r'}), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}
