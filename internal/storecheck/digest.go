package storecheck

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kolco-dev/kolco/internal/resp"
)

// Digest returns what key holds on the server at addr, whatever its
// encoding: its type, how many items, a hash of them in an order of
// their own (a hash's fields and a set's members sorted, a sorted set's
// members and scores, a list's elements, a stream's entries and its last
// ID and counts), and its expiry (PEXPIRETIME). It reads a big key in
// pieces, so that it holds the server little longer than a request.
func Digest(ctx context.Context, addr, key string) (string, error) {
	c, err := resp.Dial(ctx, addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	d := &digester{c: c, key: key}
	typ := d.do("TYPE", key).Str
	var items []string
	switch typ {
	case "hash", "set":
		items = d.scan(map[string]string{"hash": "HSCAN", "set": "SSCAN"}[typ], typ == "hash")
		slices.Sort(items)
	case "zset":
		items = d.ranges("ZRANGE", "WITHSCORES")
	case "list":
		items = d.ranges("LRANGE")
	case "stream":
		for _, e := range d.do("XRANGE", key, "-", "+").Elems {
			if len(e.Elems) == 2 {
				f, _ := e.Elems[1].Strings()
				items = append(items, e.Elems[0].Str+":"+strings.Join(f, ","))
			}
		}
		v := d.do("XINFO", "STREAM", key)
		for i := 0; i+1 < len(v.Elems); i += 2 {
			if k := v.Elems[i].Str; k == "last-generated-id" || k == "max-deleted-entry-id" || k == "entries-added" {
				items = append(items, fmt.Sprint(k, "=", v.Elems[i+1].Str, v.Elems[i+1].Int))
			}
		}
	case "string":
		items = []string{d.do("GET", key).Str}
	}
	expires := d.do("PEXPIRETIME", key).Int
	if d.err != nil {
		return "", d.err
	}
	h := sha256.Sum256([]byte(strings.Join(items, "\x00")))
	return fmt.Sprintf("%s of %d items, sha256 %x, expires %d", typ, len(items), h[:8], expires), nil
}

type digester struct {
	c   *resp.Conn
	key string
	err error
}

func (d *digester) do(args ...string) resp.Value {
	if d.err != nil {
		return resp.Value{}
	}
	v, err := d.c.Do(args...)
	d.err = err
	return v
}

// scan reads a hash's fields (pairs: "field=value") or a set's members
// with cmd, each once.
func (d *digester) scan(cmd string, pairs bool) []string {
	seen := map[string]bool{}
	var out []string
	cursor := "0"
	for d.err == nil {
		v := d.do(cmd, d.key, cursor, "COUNT", "10000")
		if len(v.Elems) != 2 {
			break
		}
		s, _ := v.Elems[1].Strings()
		step := 1
		if pairs {
			step = 2
		}
		for i := 0; i+step-1 < len(s); i += step {
			item := s[i]
			if pairs {
				item += "=" + s[i+1]
			}
			if !seen[s[i]] {
				seen[s[i]] = true
				out = append(out, item)
			}
		}
		if cursor = v.Elems[0].Str; cursor == "0" {
			break
		}
	}
	return out
}

// ranges reads a list or a sorted set by index, 100,000 at a time.
func (d *digester) ranges(cmd string, extra ...string) []string {
	var out []string
	for start := 0; d.err == nil; start += 100_000 {
		v := d.do(append([]string{cmd, d.key, strconv.Itoa(start), strconv.Itoa(start + 99_999)}, extra...)...)
		s, _ := v.Strings()
		out = append(out, s...)
		if len(v.Elems) == 0 {
			break
		}
	}
	return out
}
