package trace

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// kolco's trace format, version 1 (docs/trace.md):
//
//	#kolco-trace v1
//	# time key size command result
//	1767225600.000125 user:42 512 get hit
//	1767225600.000340 user%2042 - set -
//
// The first line names the version; other lines starting with '#' are
// comments. A request is one line of five fields separated by a space:
// the time in seconds since the Unix epoch (up to nine decimals), the key
// percent-encoded (bytes up to the space, DEL, '%', '"' and bytes that are
// not UTF-8 as %XX; the empty key as ""), the value's size in bytes or "-",
// the command in lowercase, and hit, miss or "-". Fields after the fifth
// are left for later versions to add and are skipped by this reader, so
// that adding one needs no new version; a change that a version-1 reader
// would misread is version 2.

// kolcoMagic starts a kolco trace; the version follows.
const kolcoMagic = "#kolco-trace v"

// kolcoVersion is the version this package reads and writes.
const kolcoVersion = 1

// kolcoReader reads kolco's trace format.
type kolcoReader struct {
	l     lines
	stats Stats
}

func newKolcoReader(br *bufio.Reader) (*kolcoReader, error) {
	r := &kolcoReader{l: lines{r: br}}
	head, err := r.l.next()
	if err == io.EOF {
		return nil, badLine(1, "empty: a kolco trace starts with %q", kolcoMagic+"1")
	}
	if err != nil {
		return nil, err
	}
	v, ok := bytes.CutPrefix(head, []byte(kolcoMagic))
	if !ok {
		return nil, badLine(1, "a kolco trace starts with %q, not %q", kolcoMagic+"1", clip(head))
	}
	n, err := strconv.Atoi(string(bytes.TrimRight(v, " \t")))
	if err != nil || n < 1 {
		return nil, badLine(1, "version %q is not a number", clip(v))
	}
	if n != kolcoVersion {
		return nil, fmt.Errorf("%w: the trace is version %d; this kolco reads version %d", ErrVersion, n, kolcoVersion)
	}
	r.stats.Lines = 1
	return r, nil
}

func (r *kolcoReader) Stats() Stats { return r.stats }

func (r *kolcoReader) Next() (Request, error) {
	for {
		line, err := r.l.next()
		if err != nil {
			return Request{}, err
		}
		r.stats.Lines = r.l.n
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		req, err := parseKolcoLine(line, r.l.n)
		if err != nil {
			return Request{}, r.l.fail(err)
		}
		return req, nil
	}
}

// parseKolcoLine reads one request line; n is its number.
func parseKolcoLine(line []byte, n int64) (Request, error) {
	var f [5][]byte
	rest := line
	for i := range f {
		var ok bool
		f[i], rest, ok = bytes.Cut(rest, []byte(" "))
		if len(f[i]) == 0 || !ok && i < len(f)-1 {
			return Request{}, badLine(n, "want 5 fields \"TIME KEY SIZE COMMAND RESULT\" separated by one space, got %q", clip(line))
		}
	}
	var req Request
	var ok bool
	if req.Time, ok = parseSeconds(f[0]); !ok {
		return req, badLine(n, "time %q is not seconds since the epoch such as 1767225600.000125", clip(f[0]))
	}
	key, err := decodeKey(f[1])
	if err != nil {
		return req, badLine(n, "key %q: %v", clip(f[1]), err)
	}
	req.Key = key
	req.Size = -1
	if string(f[2]) != "-" {
		if req.Size, ok = parseSize(f[2]); !ok {
			return req, badLine(n, "size %q is not a byte count or -", clip(f[2]))
		}
	}
	req.Command = string(f[3])
	req.Op = opOf(req.Command)
	switch string(f[4]) {
	case "hit":
		req.Result = Hit
	case "miss":
		req.Result = Miss
	case "-":
	default:
		return req, badLine(n, "result %q is not hit, miss or -", clip(f[4]))
	}
	return req, nil
}

// decodeKey reverses appendKey.
func decodeKey(b []byte) (string, error) {
	if string(b) == `""` {
		return "", nil
	}
	return percentDecode(b)
}

// percentDecode decodes every %XX of b.
func percentDecode(b []byte) (string, error) {
	if bytes.IndexByte(b, '%') < 0 {
		return string(b), nil
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '%' {
			out = append(out, b[i])
			continue
		}
		if i+2 >= len(b) || unhex(b[i+1]) < 0 || unhex(b[i+2]) < 0 {
			return "", fmt.Errorf("%% at byte %d is not followed by two hex digits", i)
		}
		out = append(out, byte(unhex(b[i+1])<<4|unhex(b[i+2])))
		i += 2
	}
	return string(out), nil
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}

// appendKey appends key as a kolco trace writes it: bytes up to the space,
// DEL, '%', '"' and bytes that are not UTF-8 as %XX, the empty key as "".
func appendKey(dst []byte, key string) []byte {
	if key == "" {
		return append(dst, `""`...)
	}
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(key); {
		c := key[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(key[i:])
			if r != utf8.RuneError || n > 1 {
				dst = append(dst, key[i:i+n]...)
				i += n
				continue
			}
		}
		if c <= ' ' || c == 0x7f || c == '%' || c == '"' || c >= utf8.RuneSelf {
			dst = append(dst, '%', hex[c>>4], hex[c&15])
		} else {
			dst = append(dst, c)
		}
		i++
	}
	return dst
}

// clip shortens b for an error message.
func clip(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}
