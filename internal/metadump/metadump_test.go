package metadump

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// escapeKey encodes a key as memcached's metadump does: every byte but
// letters, digits and "-._~" as %XX.
func escapeKey(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		c := k[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func TestParseLine(t *testing.T) {
	for _, c := range []struct {
		name, line string
		want       Item
	}{
		{"memcached 1.6.18", "key=foo exp=-1 la=1796277102 cas=7 fetch=yes cls=1 size=65", Item{"foo", 65, -1, 7}},
		{"escaped percent", "key=k%2520x exp=1796277202 la=1796277102 cas=2 fetch=no cls=1 size=78", Item{"k%20x", 78, 1796277202, 2}},
		{"escaped colon and UTF-8", "key=user%3A%D0%BA size=70 exp=0", Item{"user:к", 70, 0, 0}},
		{"lower-case hex", "key=%3a size=1", Item{":", 1, -1, 0}},
		{"no expiry field", "size=9 key=x", Item{"x", 9, -1, 0}},
		{"largest cas", "key=x size=9 cas=18446744073709551615", Item{"x", 9, -1, 1<<64 - 1}},
		{"double spaces", "key=x  size=9 ", Item{"x", 9, -1, 0}},
		{"unknown fields", "key=x size=9 flags=3 ttl=1", Item{"x", 9, -1, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseLine([]byte(c.line))
			if err != nil || got != c.want {
				t.Errorf("%+v, %v; want %+v", got, err, c.want)
			}
		})
	}
	for _, line := range []string{"", "key=x", "size=1", "key= size=1", "key=%4 size=1", "key=%zz size=1",
		"key=x size=-1", "key=x size=big", "key=x size=1 exp=never", "key=x size=1 junk", "key=x size=1 cas=-1",
		"key=x size=1 cas=18446744073709551616"} {
		t.Run("bad "+line, func(t *testing.T) {
			if it, err := ParseLine([]byte(line)); !errors.Is(err, ErrBad) {
				t.Errorf("%+v, %v; want ErrBad", it, err)
			}
		})
	}
}

// readAll reads a whole dump with a Reader.
func readAll(reply string) ([]Item, error) {
	r := NewReader(bufio.NewReaderSize(strings.NewReader(reply), 16))
	var items []Item
	for {
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			return items, nil
		}
		if err != nil {
			return items, err
		}
		items = append(items, it)
	}
}

func TestReader(t *testing.T) {
	dump := "key=a exp=-1 la=1 cas=1 fetch=no cls=1 size=60\nkey=b%20c exp=5 la=1 cas=2 fetch=no cls=1 size=61\nEND\r\n"
	items, err := readAll(dump)
	if err != nil || len(items) != 2 || items[0] != (Item{"a", 60, -1, 1}) || items[1] != (Item{"b c", 61, 5, 2}) {
		t.Fatalf("%+v, %v", items, err)
	}
	if items, err := readAll("END\r\n"); err != nil || len(items) != 0 {
		t.Errorf("empty server: %v, %v", items, err)
	}
	for _, c := range []struct {
		name, reply string
		want        error
	}{
		{"busy", "BUSY currently processing crawler request\r\n", ErrBusy},
		{"crawler disabled", "CLIENT_ERROR lru crawler disabled\r\n", ErrBad},
		{"not allowed", "ERROR metadump not allowed\r\n", ErrBad},
		{"bad item", "key=a size=1\nkey=%%% size=2\nEND\r\n", ErrBad},
		{"cut short", "key=a size=1\nkey=b si", io.ErrUnexpectedEOF},
		{"no END", "key=a size=1\n", io.ErrUnexpectedEOF},
		{"over-long line", "key=" + strings.Repeat("a", 2*MaxLine) + " size=1\nEND\r\n", ErrBad},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := readAll(c.reply); !errors.Is(err, c.want) {
				t.Errorf("%v; want %v", err, c.want)
			}
		})
	}
}

// TestReaderStopsAtEnd: nothing after END is read as an item, and Next
// keeps answering io.EOF.
func TestReaderStopsAtEnd(t *testing.T) {
	r := NewReader(bufio.NewReader(strings.NewReader("key=a size=1\nEND\r\nkey=b size=1\n")))
	if it, err := r.Next(); err != nil || it.Key != "a" {
		t.Fatalf("%+v, %v", it, err)
	}
	for range 2 {
		if it, err := r.Next(); !errors.Is(err, io.EOF) {
			t.Fatalf("%+v, %v; want io.EOF", it, err)
		}
	}
}

// FuzzParseLine: any line parses or fails with ErrBad, never panics; a
// key encoded as memcached encodes it reads back whole, with its CAS.
func FuzzParseLine(f *testing.F) {
	f.Add("key=foo exp=-1 la=1796277102 cas=1 fetch=yes cls=1 size=65", "user:1", uint64(1)) // memcached 1.6.18
	f.Add("key=k%2520x size=78", "100%", uint64(0))                                          // an escaped '%'
	f.Add("key=%D0%BA size=1 exp=9", "\x00\xff key", uint64(1<<63))                          // UTF-8 and raw bytes
	f.Add("key=%4 size=1", "", uint64(0))                                                    // truncated escape
	f.Add("size=1", "a=b", uint64(9))                                                        // no key
	f.Fuzz(func(t *testing.T, line, key string, cas uint64) {
		if _, err := ParseLine([]byte(line)); err != nil && !errors.Is(err, ErrBad) {
			t.Fatalf("%q: %v does not wrap ErrBad", line, err)
		}
		if key == "" {
			return
		}
		it, err := ParseLine([]byte(fmt.Sprintf("key=%s exp=-1 cas=%d size=7", escapeKey(key), cas)))
		if err != nil || it.Key != key || it.Size != 7 || it.Cas != cas {
			t.Fatalf("key %q encoded: %+v, %v", key, it, err)
		}
	})
}

// FuzzReader: any reply gives items then io.EOF or an error, never a
// panic.
func FuzzReader(f *testing.F) {
	f.Add("key=a size=1\nEND\r\n")
	f.Add("BUSY currently processing crawler request\r\n")
	f.Add("key=a size=1\nkey=b")
	f.Fuzz(func(t *testing.T, reply string) {
		items, err := readAll(reply)
		if err == nil && !strings.Contains(reply, "END") {
			t.Fatalf("%d items and no error from a reply without END", len(items))
		}
	})
}
