package keys

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Keys read from running memcached servers: "lru_crawler metadump all"
// lists every item a server holds, one line each, such as (memcached
// 1.6.18)
//
//	key=user%3A42 exp=-1 la=1796277102 cas=7 fetch=yes cls=1 size=65
//
// with the key URL-encoded, the expiry as a Unix time (-1: none) and the
// item's size in the server's memory (header, key and value), and a line
// "END" last.

// The errors of [ParseMetadumpLine], [ReadMetadump] and [Metadump].
var (
	// ErrMetadump is wrapped by every error about a metadump reply: a
	// malformed line, or a reply other than the dump, such as the
	// server's "CLIENT_ERROR lru crawler disabled".
	ErrMetadump = errors.New("keys: bad metadump")
	// ErrBusy is returned for a server busy with another crawl
	// ("BUSY currently processing crawler request"); a later request may
	// succeed.
	ErrBusy = errors.New("keys: memcached is busy with another crawl")
)

// Item is one item a memcached server holds.
type Item struct {
	// Key is the item's key, decoded.
	Key string
	// Size is the bytes the item takes in the server's memory.
	Size int64
	// Exp is the item's expiry as a Unix time; -1 means none.
	Exp int64
}

// maxMetadumpLine bounds one line of a dump: a key of memcached's largest,
// 250 bytes, takes 750 encoded, and the other fields well under 200.
const maxMetadumpLine = 4096

// ParseMetadumpLine reads one line of a metadump, without its line end.
// Fields are name=value pairs separated by spaces; key and size are
// needed, exp is read when present (else -1), the others are ignored. The
// error wraps [ErrMetadump].
func ParseMetadumpLine(line []byte) (Item, error) {
	it, hasKey, hasSize := Item{Exp: -1}, false, false
	for _, f := range bytes.Split(line, []byte{' '}) {
		name, value, ok := bytes.Cut(f, []byte{'='})
		if !ok {
			if len(f) == 0 {
				continue
			}
			return Item{}, fmt.Errorf("%w: field %q is not name=value", ErrMetadump, f)
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
		}
		if err != nil {
			return Item{}, fmt.Errorf("%w: %s=%q: %v", ErrMetadump, name, value, err)
		}
	}
	if !hasKey || !hasSize {
		return Item{}, fmt.Errorf("%w: line %q lacks key= or size=", ErrMetadump, line)
	}
	return it, nil
}

// unescapeKey decodes memcached's URL encoding of a key: %XX is the byte
// of hex value XX, every other byte stands for itself.
func unescapeKey(s []byte) (string, error) {
	if len(s) == 0 {
		return "", errors.New("empty key")
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
		v, err := strconv.ParseUint(string(s[i+1:i+3]), 16, 8)
		if err != nil {
			return "", fmt.Errorf("bad %%-escape %q", s[i:i+3])
		}
		out = append(out, byte(v))
		i += 2
	}
	return string(out), nil
}

// ReadMetadump reads one reply to "lru_crawler metadump": item lines up
// to the line "END". The error is [ErrBusy] when the server is busy with
// another crawl; it wraps [ErrMetadump] for a malformed line, a line
// longer than memcached writes, or any other one-line reply (the server's
// own error, such as "CLIENT_ERROR lru crawler disabled"); else it is r's
// own, io.ErrUnexpectedEOF for a reply cut short.
func ReadMetadump(r *bufio.Reader) ([]Item, error) {
	var items []Item
	for {
		line, err := readLine(r)
		if err != nil {
			return nil, err
		}
		switch {
		case string(line) == "END":
			return items, nil
		case bytes.HasPrefix(line, []byte("key=")):
			it, err := ParseMetadumpLine(line)
			if err != nil {
				return nil, err
			}
			items = append(items, it)
		case bytes.HasPrefix(line, []byte("BUSY")):
			return nil, ErrBusy
		default:
			return nil, fmt.Errorf("%w: the server answered %q", ErrMetadump, line)
		}
	}
}

// readLine returns the next line of r without its "\n" or "\r\n".
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > maxMetadumpLine {
			return nil, fmt.Errorf("%w: a line is longer than %d bytes", ErrMetadump, maxMetadumpLine)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(line[:len(line)-1], []byte{'\r'}), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// FromItems returns the keys of items with their sizes, each key once:
// where servers hold copies of one key, the first item listed counts.
func FromItems(items []Item) *Set {
	seen := make(map[string]bool, len(items))
	var (
		names []string
		sizes []float64
	)
	for _, it := range items {
		if seen[it.Key] {
			continue
		}
		seen[it.Key] = true
		names, sizes = append(names, it.Key), append(sizes, float64(it.Size))
	}
	ks := List(names)
	ks.Sizes = sizes
	return ks
}
