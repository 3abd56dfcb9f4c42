package trace

import (
	"bufio"
	"bytes"
	"strconv"
)

// The Twitter cache-trace CSV (github.com/twitter/cache-trace; Yang, Yue
// and Rashmi, OSDI 2020), one request a line:
//
//	timestamp,anonymized key,key size,value size,client id,operation,TTL
//	0,nz:u:eeW511W3dcH3de3d15ec,22,213,4,get,0
//
// the timestamp in seconds from the trace's start, the operation one of
// get, gets, set, add, replace, cas, append, prepend, delete, incr, decr.
// An anonymized key keeps its namespaces but not its length, so the key
// size field is kept as the request's KeySize. The last five fields are
// numbers and a word, so a comma inside a key is read as the key's. The
// traces carry no hit or miss. A first line that is a header (its first
// field not a number) is passed over, and so are lines starting with '#'.

// twitterFields is the number of fields of a line.
const twitterFields = 7

// twitterReader reads the Twitter cache-trace CSV.
type twitterReader struct {
	l     lines
	stats Stats
}

func newTwitterReader(br *bufio.Reader) *twitterReader { return &twitterReader{l: lines{r: br}} }

func (r *twitterReader) Stats() Stats { return r.stats }

func (r *twitterReader) Next() (Request, error) {
	for {
		line, err := r.l.next()
		if err != nil {
			return Request{}, err
		}
		r.stats.Lines = r.l.n
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		req, err := parseTwitterLine(line, r.l.n)
		if err != nil && r.l.n == 1 && isHeader(line) {
			continue
		}
		if err != nil {
			return Request{}, r.l.fail(err)
		}
		return req, nil
	}
}

// isHeader reports whether line's first field is a name, not a number.
func isHeader(line []byte) bool {
	first, _, _ := bytes.Cut(line, []byte(","))
	_, err := strconv.ParseFloat(string(first), 64)
	return err != nil && len(first) > 0
}

// parseTwitterLine reads one line; n is its number.
func parseTwitterLine(line []byte, n int64) (Request, error) {
	first := bytes.IndexByte(line, ',')
	var tail [twitterFields - 2][]byte // key size ... TTL
	end := len(line)
	for i := len(tail) - 1; i >= 0 && first >= 0; i-- {
		c := bytes.LastIndexByte(line[:end], ',')
		if c <= first {
			return Request{}, badLine(n, "want %d comma-separated fields \"timestamp,key,key size,value size,client id,operation,TTL\", got %q", twitterFields, clip(line))
		}
		tail[i], end = line[c+1:end], c
	}
	if first < 0 {
		return Request{}, badLine(n, "want %d comma-separated fields, got %q", twitterFields, clip(line))
	}
	req := Request{Key: string(line[first+1 : end])}
	var ok bool
	if req.Time, ok = parseSeconds(line[:first]); !ok {
		return req, badLine(n, "timestamp %q is not a number of seconds", clip(line[:first]))
	}
	ks, ok1 := parseSize(tail[0])
	vs, ok2 := parseSize(tail[1])
	_, ok3 := parseSize(tail[2])
	_, ok4 := parseSize(tail[4])
	if !ok1 || !ok2 || !ok3 || !ok4 || ks > 1<<20 {
		return req, badLine(n, "key size, value size, client id and TTL must be numbers, got %q", clip(line[end+1:]))
	}
	req.Command = string(bytes.ToLower(tail[3]))
	if req.Command == "" {
		return req, badLine(n, "no operation")
	}
	req.Op = opOf(req.Command)
	req.KeySize, req.Size = int(ks), vs
	if req.Op != Write && vs == 0 {
		req.Size = -1 // a get's value size is unknown when 0: a miss, or not logged
	}
	return req, nil
}
