package keys

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

func TestParseMetadumpLine(t *testing.T) {
	for _, c := range []struct {
		name, line string
		want       Item
	}{
		{"memcached 1.6.18", "key=foo exp=-1 la=1796277102 cas=1 fetch=yes cls=1 size=65", Item{"foo", 65, -1}},
		{"escaped percent", "key=k%2520x exp=1796277202 la=1796277102 cas=2 fetch=no cls=1 size=78", Item{"k%20x", 78, 1796277202}},
		{"escaped colon and UTF-8", "key=user%3A%D0%BA size=70 exp=0", Item{"user:к", 70, 0}},
		{"lower-case hex", "key=%3a size=1", Item{":", 1, -1}},
		{"no expiry field", "size=9 key=x", Item{"x", 9, -1}},
		{"unknown fields", "key=x size=9 flags=3 ttl=1", Item{"x", 9, -1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseMetadumpLine([]byte(c.line))
			if err != nil || got != c.want {
				t.Errorf("%+v, %v; want %+v", got, err, c.want)
			}
		})
	}
	for _, line := range []string{"", "key=x", "size=1", "key= size=1", "key=%4 size=1", "key=%zz size=1",
		"key=x size=-1", "key=x size=big", "key=x size=1 exp=never", "key=x size=1 junk"} {
		t.Run("bad "+line, func(t *testing.T) {
			if it, err := ParseMetadumpLine([]byte(line)); !errors.Is(err, ErrMetadump) {
				t.Errorf("%+v, %v; want ErrMetadump", it, err)
			}
		})
	}
}

func TestReadMetadump(t *testing.T) {
	dump := "key=a exp=-1 la=1 cas=1 fetch=no cls=1 size=60\nkey=b%20c exp=5 la=1 cas=2 fetch=no cls=1 size=61\nEND\r\n"
	items, err := ReadMetadump(bufio.NewReader(strings.NewReader(dump)))
	if err != nil || len(items) != 2 || items[0] != (Item{"a", 60, -1}) || items[1] != (Item{"b c", 61, 5}) {
		t.Fatalf("%+v, %v", items, err)
	}
	if items, err := ReadMetadump(bufio.NewReader(strings.NewReader("END\r\n"))); err != nil || len(items) != 0 {
		t.Errorf("empty server: %v, %v", items, err)
	}
	for _, c := range []struct {
		name, reply string
		want        error
	}{
		{"busy", "BUSY currently processing crawler request\r\n", ErrBusy},
		{"crawler disabled", "CLIENT_ERROR lru crawler disabled\r\n", ErrMetadump},
		{"not allowed", "ERROR metadump not allowed\r\n", ErrMetadump},
		{"bad item", "key=a size=1\nkey=%%% size=2\nEND\r\n", ErrMetadump},
		{"cut short", "key=a size=1\nkey=b si", io.ErrUnexpectedEOF},
		{"no END", "key=a size=1\n", io.ErrUnexpectedEOF},
		{"over-long line", "key=" + strings.Repeat("a", 2*maxMetadumpLine) + " size=1\nEND\r\n", ErrMetadump},
	} {
		t.Run(c.name, func(t *testing.T) {
			if items, err := ReadMetadump(bufio.NewReaderSize(strings.NewReader(c.reply), 16)); !errors.Is(err, c.want) || items != nil {
				t.Errorf("%v, %v; want %v and no items", items, err, c.want)
			}
		})
	}
}

func TestFromItemsKeepsEachKeyOnce(t *testing.T) {
	ks := FromItems([]Item{{"a", 10, -1}, {"b", 20, -1}, {"a", 99, -1}})
	if ks.Len() != 2 || ks.Key(0) != "a" || ks.Size(0) != 10 || ks.Key(1) != "b" || ks.TotalSize() != 30 {
		t.Errorf("%d keys, sizes %v", ks.Len(), ks.Sizes)
	}
}

// FuzzParseMetadumpLine: any line parses or fails with ErrMetadump, never
// panics; a key encoded as memcached encodes it reads back whole.
func FuzzParseMetadumpLine(f *testing.F) {
	f.Add("key=foo exp=-1 la=1796277102 cas=1 fetch=yes cls=1 size=65", "user:1") // memcached 1.6.18
	f.Add("key=k%2520x size=78", "100%")                                          // an escaped '%'
	f.Add("key=%D0%BA size=1 exp=9", "\x00\xff key")                              // UTF-8 and raw bytes
	f.Add("key=%4 size=1", "")                                                    // truncated escape
	f.Add("size=1", "a=b")                                                        // no key
	f.Fuzz(func(t *testing.T, line, key string) {
		if _, err := ParseMetadumpLine([]byte(line)); err != nil && !errors.Is(err, ErrMetadump) {
			t.Fatalf("%q: %v does not wrap ErrMetadump", line, err)
		}
		if key == "" {
			return
		}
		it, err := ParseMetadumpLine([]byte("key=" + escapeKey(key) + " exp=-1 size=7"))
		if err != nil || it.Key != key || it.Size != 7 {
			t.Fatalf("key %q encoded: %+v, %v", key, it, err)
		}
	})
}

// FuzzReadMetadump: any reply gives items or an error, never a panic, and
// never both.
func FuzzReadMetadump(f *testing.F) {
	f.Add("key=a size=1\nEND\r\n")
	f.Add("BUSY currently processing crawler request\r\n")
	f.Add("key=a size=1\nkey=b")
	f.Fuzz(func(t *testing.T, reply string) {
		items, err := ReadMetadump(bufio.NewReaderSize(strings.NewReader(reply), 16))
		if err != nil && items != nil {
			t.Fatalf("%d items with error %v", len(items), err)
		}
	})
}
