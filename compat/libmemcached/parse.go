package libmemcached

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// ErrBadServerList is returned by [ParseServers] for a list
// memcached_servers_parse rejects or would overrun its buffer with.
var ErrBadServerList = errors.New("libmemcached: bad server list")

// hugeStringLen is the size of memcached_servers_parse's per-server buffer
// (HUGE_STRING_LEN).
const hugeStringLen = 8196

// ParseServers parses a server list the way libmemcached 1.1.4's
// memcached_servers_parse does, quirks included:
//
//   - Servers are separated by commas; one whitespace byte after a comma is
//     skipped. A trailing comma adds nothing, an empty entry is "localhost".
//   - "host:port", "host:port:weight" and "host:port weight"; "[v6]:port"
//     keeps the brackets in the host. Port and weight are read as strtoul
//     does (leading whitespace and a sign allowed, parsing stops at the first
//     non-digit, no digits reads 0) and truncated to 16 and 32 bits.
//   - A port of 0 or none is 11211; weight 0 or none is 1.
//   - A host starting with "/" is a unix socket ([Server.Socket]); its port
//     is 0 whatever was written.
//
// A number beyond 2^64-1, an entry of 8196 bytes or more and a host of 1025
// bytes or more (which libmemcached drops together with the servers before
// it) give an error wrapping [ErrBadServerList]. Text after a NUL byte is
// ignored, as in C.
func ParseServers(list string) ([]Server, error) {
	if i := strings.IndexByte(list, 0); i >= 0 {
		list = list[:i]
	}
	var out []Server
	for rest := list; rest != ""; {
		entry := rest
		if i := strings.IndexByte(rest, ','); i >= 0 {
			entry, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if len(entry) >= hugeStringLen {
			return nil, fmt.Errorf("%w: entry of %d bytes", ErrBadServerList, len(entry))
		}
		s, err := parseServer(entry)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		if rest != "" && isSpace(rest[0]) {
			rest = rest[1:]
		}
	}
	return out, nil
}

func parseServer(entry string) (Server, error) {
	colon := strings.IndexByte(entry, ':')
	if lb := strings.IndexByte(entry, '['); lb >= 0 {
		if rb := strings.IndexByte(entry[lb+1:], ']'); rb >= 0 {
			after := lb + 1 + rb + 1
			if colon = strings.IndexByte(entry[after:], ':'); colon >= 0 {
				colon += after
			}
		}
	}
	s := Server{Host: entry}
	if colon >= 0 {
		s.Host = entry[:colon]
		tail := entry[colon+1:]
		port, ok := strtoul(tail)
		if !ok {
			return Server{}, fmt.Errorf("%w: port in %q out of range", ErrBadServerList, entry)
		}
		s.Port = int(uint16(port))
		sep := strings.IndexByte(tail, ' ')
		if sep < 0 {
			sep = strings.IndexByte(tail, ':')
		}
		if sep >= 0 {
			w, ok := strtoul(tail[sep+1:])
			if !ok {
				return Server{}, fmt.Errorf("%w: weight in %q out of range", ErrBadServerList, entry)
			}
			s.Weight = int(uint32(w))
		}
	}
	if len(s.Host) > maxHost {
		return Server{}, fmt.Errorf("%w: host of %d bytes", ErrBadServerList, len(s.Host))
	}
	switch {
	case strings.HasPrefix(s.Host, "/"):
		s.Port, s.Socket = 0, true
	case s.Port == 0:
		s.Port = DefaultPort
	}
	if s.Weight == 0 {
		s.Weight = 1
	}
	return s, nil
}

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// strtoul reads a base-10 number as glibc's strtoul does: leading
// whitespace, an optional sign, digits up to the first non-digit, negation
// modulo 2^64; false when the magnitude exceeds 2^64-1 (ERANGE).
func strtoul(s string) (uint64, bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var v uint64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}
