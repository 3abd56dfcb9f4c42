package memcache

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"

	"github.com/kolco-dev/kolco/proxy/internal/wire"
)

// The meta commands the proxy sends of its own, to move a value between
// servers during a change and to delete the copies left behind (checked
// against memcached 1.6.18):
//
//	mg <key> t f v                            -> VA <n> t<ttl> f<flags>\r\n<data>\r\n, or EN
//	mg <key> c                                -> HD c<cas>, or EN
//	ms <key> <n> T<ttl> F<flags> ME c\r\n...  -> HD c<cas> (stored), or NS (the key exists)
//	ms <key> <n> T<ttl> F<flags> C<cas> c\r\n... -> HD c<cas>, EX (other CAS) or NF (no such key)
//	md <key> [C<cas>]                         -> HD, NF (no such key), or EX (other CAS)
//
// A key that is not plain text (a meta key sent with b) is written in
// base64 with the b flag.

// maxRelativeTTL is memcached's REALTIME_MAXDELTA: an expiry above it is
// read as a Unix time, not as seconds from now.
const maxRelativeTTL = 60 * 60 * 24 * 30

// AppendMetaFetch appends "mg <key> t f v" (with b when the key is
// base64): a read of a key's value with its remaining TTL and flags.
func AppendMetaFetch(dst, key []byte, base64 bool) []byte {
	dst = append(dst, "mg "...)
	dst = append(dst, key...)
	dst = append(dst, " t f v"...)
	if base64 {
		dst = append(dst, " b"...)
	}
	return append(dst, "\r\n"...)
}

// MetaValue is a value read by the request of [AppendMetaFetch].
type MetaValue struct {
	// TTL is the remaining time to live in seconds; -1 means none.
	TTL int64
	// Flags are the client flags.
	Flags uint32
	// Data is the value, pointing into the reply.
	Data []byte
}

// ParseMetaValue reads the reply to [AppendMetaFetch]: the value and true
// for "VA", false for a miss ("EN"). The error wraps [ErrBadReply] for
// any other reply, a server's error line included.
func ParseMetaValue(reply []byte) (MetaValue, bool, error) {
	if bytes.Equal(reply, []byte("EN\r\n")) {
		return MetaValue{}, false, nil
	}
	line, data, ok := bytes.Cut(reply, []byte("\r\n"))
	if !ok || !bytes.HasPrefix(line, []byte("VA ")) {
		return MetaValue{}, false, fmt.Errorf("%w: %q", ErrBadReply, clip(reply))
	}
	var fa [4][]byte
	f := fields(fa[:0], line[len("VA "):])
	if len(f) < 1 {
		return MetaValue{}, false, fmt.Errorf("%w: %q", ErrBadReply, clip(line))
	}
	n, ok := wire.ParseUint(f[0])
	if !ok || n > math.MaxInt32 || uint64(len(data)) != n+2 || !bytes.HasSuffix(data, []byte("\r\n")) {
		return MetaValue{}, false, fmt.Errorf("%w: %q", ErrBadReply, clip(line))
	}
	v := MetaValue{TTL: -1, Data: data[:n]}
	seen := 0
	for _, t := range f[1:] {
		var err error
		switch t[0] {
		case 't':
			v.TTL, err = strconv.ParseInt(string(t[1:]), 10, 64)
			seen |= 1
		case 'f':
			var u uint64
			u, err = strconv.ParseUint(string(t[1:]), 10, 32)
			v.Flags = uint32(u)
			seen |= 2
		}
		if err != nil {
			return MetaValue{}, false, fmt.Errorf("%w: %q", ErrBadReply, clip(line))
		}
	}
	if seen != 3 {
		return MetaValue{}, false, fmt.Errorf("%w: no t or f in %q", ErrBadReply, clip(line))
	}
	return v, true, nil
}

// StoreTTL returns the T flag's value that stores an item for ttl more
// seconds, as mg's t gave it, at the Unix time now, and false when there
// is nothing left to store: "t-1" (no expiry) is stored as T0, since T-1
// stores an item already expired; a TTL over 30 days is written as the
// Unix time it ends at, since memcached reads a larger T so; a TTL of 0
// or less has run out.
func StoreTTL(ttl, now int64) (int64, bool) {
	switch {
	case ttl == -1:
		return 0, true
	case ttl <= 0:
		return 0, false
	case ttl > maxRelativeTTL:
		return now + ttl, true
	}
	return ttl, true
}

// AppendMetaAdd appends an ms in add mode ("ME") that stores data with
// the T flag's value exptime (seconds from now, or a Unix time over 30
// days, 0 for none) and flags, and asks for the CAS value stored ("c").
func AppendMetaAdd(dst, key []byte, base64 bool, exptime int64, flags uint32, data []byte) []byte {
	dst = append(dst, "ms "...)
	dst = append(dst, key...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(len(data)), 10)
	dst = append(dst, " T"...)
	dst = strconv.AppendInt(dst, exptime, 10)
	dst = append(dst, " F"...)
	dst = strconv.AppendUint(dst, uint64(flags), 10)
	dst = append(dst, " ME c"...)
	if base64 {
		dst = append(dst, " b"...)
	}
	return appendData(dst, data)
}

// AppendMetaCas appends "mg <key> c": a read of the key's CAS value alone.
func AppendMetaCas(dst, key []byte, base64 bool) []byte {
	dst = append(dst, "mg "...)
	dst = append(dst, key...)
	dst = append(dst, " c"...)
	if base64 {
		dst = append(dst, " b"...)
	}
	return append(dst, "\r\n"...)
}

// ParseMetaCas reads the reply to [AppendMetaCas]: the CAS value and true,
// or false for a miss ("EN"). The error wraps [ErrBadReply] for any other
// reply.
func ParseMetaCas(reply []byte) (uint64, bool, error) {
	if bytes.Equal(reply, []byte("EN\r\n")) {
		return 0, false, nil
	}
	line, ok := bytes.CutSuffix(reply, []byte("\r\n"))
	c, isHD := bytes.CutPrefix(line, []byte("HD c"))
	if !ok || !isHD {
		return 0, false, fmt.Errorf("%w: %q", ErrBadReply, clip(reply))
	}
	cas, ok := wire.ParseUint(c)
	if !ok {
		return 0, false, fmt.Errorf("%w: %q", ErrBadReply, clip(reply))
	}
	return cas, true, nil
}

// AppendMetaSize appends "mg <key> s": a read of the length of the key's
// value alone.
func AppendMetaSize(dst, key []byte, base64 bool) []byte {
	dst = append(dst, "mg "...)
	dst = append(dst, key...)
	dst = append(dst, " s"...)
	if base64 {
		dst = append(dst, " b"...)
	}
	return append(dst, "\r\n"...)
}

// ParseMetaSize reads the reply to [AppendMetaSize]: the value's length
// and true, or false for a miss ("EN"). The error wraps [ErrBadReply] for
// any other reply.
func ParseMetaSize(reply []byte) (int64, bool, error) {
	if bytes.Equal(reply, []byte("EN\r\n")) {
		return 0, false, nil
	}
	line, ok := bytes.CutSuffix(reply, []byte("\r\n"))
	s, isHD := bytes.CutPrefix(line, []byte("HD s"))
	if !ok || !isHD {
		return 0, false, fmt.Errorf("%w: %q", ErrBadReply, clip(reply))
	}
	n, ok := wire.ParseUint(s)
	if !ok || n > 1<<62 {
		return 0, false, fmt.Errorf("%w: %q", ErrBadReply, clip(reply))
	}
	return int64(n), true, nil
}

// AppendMetaReplace appends an ms that replaces the value of the key only
// while it is the one of CAS value cas ("C<cas>"), with the T flag's
// value exptime and flags, as [AppendMetaAdd] stores them.
func AppendMetaReplace(dst, key []byte, base64 bool, exptime int64, flags uint32, data []byte, cas uint64) []byte {
	dst = append(dst, "ms "...)
	dst = append(dst, key...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(len(data)), 10)
	dst = append(dst, " T"...)
	dst = strconv.AppendInt(dst, exptime, 10)
	dst = append(dst, " F"...)
	dst = strconv.AppendUint(dst, uint64(flags), 10)
	dst = append(dst, " C"...)
	dst = strconv.AppendUint(dst, cas, 10)
	dst = append(dst, " c"...)
	if base64 {
		dst = append(dst, " b"...)
	}
	return appendData(dst, data)
}

// ParseMetaStored reads the reply to [AppendMetaAdd] or
// [AppendMetaReplace]: true and the CAS value for "HD c<cas>", false for
// "NS" (the key exists), "EX" (another CAS value) or "NF" (no such key).
// The error wraps [ErrBadReply] for any other reply.
func ParseMetaStored(reply []byte) (bool, uint64, error) {
	switch string(reply) {
	case "NS\r\n", "EX\r\n", "NF\r\n": // or to [AppendMetaReplace]: another value is there
		return false, 0, nil
	}
	line, ok := bytes.CutSuffix(reply, []byte("\r\n"))
	c, isHD := bytes.CutPrefix(line, []byte("HD c"))
	if !ok || !isHD {
		return false, 0, fmt.Errorf("%w: %q", ErrBadReply, clip(reply))
	}
	cas, ok := wire.ParseUint(c)
	if !ok {
		return false, 0, fmt.Errorf("%w: %q", ErrBadReply, clip(reply))
	}
	return true, cas, nil
}

// AppendMetaDelete appends "md <key>", with "C<cas>" when cas is not 0:
// then only the value of that CAS value is deleted.
func AppendMetaDelete(dst, key []byte, base64 bool, cas uint64) []byte {
	dst = append(dst, "md "...)
	dst = append(dst, key...)
	if cas != 0 {
		dst = append(dst, " C"...)
		dst = strconv.AppendUint(dst, cas, 10)
	}
	if base64 {
		dst = append(dst, " b"...)
	}
	return append(dst, "\r\n"...)
}

// Meta delete outcomes, from [ParseMetaDeleted].
const (
	Deleted  = iota // HD
	NotFound        // NF
	Exists          // EX: the key holds a value of another CAS value
)

// ParseMetaDeleted reads the reply to [AppendMetaDelete]. The error wraps
// [ErrBadReply] for any other reply.
func ParseMetaDeleted(reply []byte) (int, error) {
	switch string(reply) {
	case "HD\r\n":
		return Deleted, nil
	case "NF\r\n":
		return NotFound, nil
	case "EX\r\n":
		return Exists, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrBadReply, clip(reply))
}

// KeyToken returns how key is written in a meta command: as it is when
// it is plain text (1 to MaxKeyLen bytes, none a space, a control
// character or DEL); else in base64, appended to buf, with isBase64 set,
// when that fits in MaxKeyLen bytes; else as it is when memcached can
// read it so (no space, CR, LF or NUL; tested with memcached 1.6.18). ok
// is false for a key no command can name.
func KeyToken(buf, key []byte) (tok []byte, isBase64 bool, ok bool) {
	if len(key) == 0 || len(key) > MaxKeyLen {
		return nil, false, false
	}
	plain, readable := true, true
	for _, c := range key {
		switch {
		case c == ' ' || c == '\r' || c == '\n' || c == 0:
			plain, readable = false, false
		case c < ' ' || c == 0x7f:
			plain = false
		}
	}
	if plain {
		return key, false, true
	}
	if n := base64.StdEncoding.EncodedLen(len(key)); n <= MaxKeyLen {
		start := len(buf)
		buf = append(buf, make([]byte, n)...)
		base64.StdEncoding.Encode(buf[start:], key)
		return buf[start:], true, true
	}
	return key, false, readable
}

// clip bounds what an error quotes of a reply.
func clip(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}
