package keys

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// The errors of [Parse] and [ParseBytes].
var (
	// ErrBadFile is wrapped by every error about the content of a key
	// file; the message names the line.
	ErrBadFile = errors.New("keys: bad key file")
	// ErrBadBytes is returned for a malformed byte size.
	ErrBadBytes = errors.New("keys: bad byte size")
)

// maxKeyLine bounds one line of a key file.
const maxKeyLine = 1 << 20

// Parse reads a key file: one key per line, "KEY [SIZE [RATE]]",
// fields separated by ASCII spaces or tabs (a key may hold any other
// byte, a no-break space included); blank lines and lines starting with
// '#' are skipped. SIZE is a byte count with an optional unit (see
// [ParseBytes]); RATE a non-negative request rate. Sizes and rates are kept
// only when some line gives them; a line without them counts 1 byte and
// rate 1. An error about the content wraps [ErrBadFile] and names the
// line; otherwise it is r's own. On error nothing is returned.
func Parse(r io.Reader) (*Set, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxKeyLine)
	var (
		keys          []string
		sizes, rates  []float64
		hasSz, hasRts bool
	)
	for line := 1; sc.Scan(); line++ {
		text := strings.Trim(sc.Text(), blanks+"\r")
		if text == "" || text[0] == '#' {
			continue
		}
		fs := strings.FieldsFunc(text, isBlank)
		if len(fs) > 3 {
			return nil, fmt.Errorf("%w: line %d: want \"KEY [SIZE [RATE]]\", got %d fields", ErrBadFile, line, len(fs))
		}
		size, rate := 1.0, 1.0
		if len(fs) > 1 {
			v, err := ParseBytes(fs[1])
			if err != nil {
				return nil, fmt.Errorf("%w: line %d: size %q is not a byte count such as 512, 4KB or 1.5GiB", ErrBadFile, line, fs[1])
			}
			size, hasSz = v, true
		}
		if len(fs) > 2 {
			v, err := strconv.ParseFloat(fs[2], 64)
			if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, fmt.Errorf("%w: line %d: rate %q is not a non-negative number", ErrBadFile, line, fs[2])
			}
			rate, hasRts = v, true
		}
		keys, sizes, rates = append(keys, fs[0]), append(sizes, size), append(rates, rate)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: a line is longer than %d bytes", ErrBadFile, maxKeyLine)
		}
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no keys", ErrBadFile)
	}
	ks := List(keys)
	if hasSz {
		ks.Sizes = sizes
	}
	if hasRts {
		ks.Rates = rates
	}
	return ks, nil
}

// blanks separate the fields of a key file's line.
const blanks = " \t"

func isBlank(r rune) bool { return r == ' ' || r == '\t' }

// byteUnits is how ParseBytes's error lists the units it takes.
const byteUnits = "k, M, G, T, P (powers of 1000) or Ki, Mi, Gi, Ti, Pi (powers of 1024), each with an optional B"

// ParseBytes reads a non-negative byte count such as "512", "4KB", "1.5GiB"
// or "3TB": decimal units k/K, M, G, T, P (powers of 1000) and binary units
// Ki, Mi, Gi, Ti, Pi (powers of 1024), each with an optional trailing "B".
// The error wraps [ErrBadBytes] and lists the units.
func ParseBytes(s string) (float64, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "b")
	mult := 1.0
	units := []struct {
		suffix string
		mult   float64
	}{
		{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"Pi", 1 << 50},
		{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15},
	}
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSuffix(t, u.suffix), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || t == "" {
		return 0, fmt.Errorf("%w: %q: want a number with an optional unit: %s", ErrBadBytes, s, byteUnits)
	}
	return v * mult, nil
}
