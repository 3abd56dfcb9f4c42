package memcache

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strconv"
	"testing"
)

func TestParseMetaValue(t *testing.T) {
	for _, c := range []struct {
		name, reply string
		hit         bool
		want        MetaValue
	}{
		{"miss", "EN\r\n", false, MetaValue{}},
		{"no expiry", "VA 3 t-1 f7\r\nabc\r\n", true, MetaValue{TTL: -1, Flags: 7, Data: []byte("abc")}},
		{"flags first", "VA 2 f4294967295 t100\r\nhi\r\n", true, MetaValue{TTL: 100, Flags: 1<<32 - 1, Data: []byte("hi")}},
		{"empty value", "VA 0 t5 f0\r\n\r\n", true, MetaValue{TTL: 5, Data: []byte{}}},
		{"value with CRLF inside", "VA 4 t1 f1\r\na\r\nb\r\n", true, MetaValue{TTL: 1, Flags: 1, Data: []byte("a\r\nb")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, hit, err := ParseMetaValue([]byte(c.reply))
			if err != nil || hit != c.hit || v.TTL != c.want.TTL || v.Flags != c.want.Flags || !bytes.Equal(v.Data, c.want.Data) {
				t.Errorf("%+v, %v, %v; want %+v, %v", v, hit, err, c.want, c.hit)
			}
		})
	}
	for _, bad := range []string{"", "EN", "HD\r\n", "SERVER_ERROR out of memory\r\n", "VA\r\n", "VA x t1 f1\r\nabc\r\n",
		"VA 4 t1 f1\r\nabc\r\n", "VA 3 t1\r\nabc\r\n", "VA 3 f1\r\nabc\r\n", "VA 3 tx f1\r\nabc\r\n", "VA 3 t1 f-1\r\nabc\r\n",
		"VA 3 t1 f4294967296\r\nabc\r\n", "VA 3 t1 f1\r\nabcde"} {
		if v, hit, err := ParseMetaValue([]byte(bad)); !errors.Is(err, ErrBadReply) {
			t.Errorf("%q: %+v, %v, %v; want ErrBadReply", bad, v, hit, err)
		}
	}
}

func TestStoreTTL(t *testing.T) {
	const now = 1_800_000_000
	for _, c := range []struct {
		ttl, want int64
		ok        bool
	}{
		{-1, 0, true}, // no expiry: T0, never T-1
		{1, 1, true},  // seconds from now
		{maxRelativeTTL, maxRelativeTTL, true},
		{maxRelativeTTL + 1, now + maxRelativeTTL + 1, true}, // a Unix time
		{0, 0, false}, // ran out
		{-2, 0, false},
	} {
		if got, ok := StoreTTL(c.ttl, now); got != c.want || ok != c.ok {
			t.Errorf("StoreTTL(%d): %d, %v; want %d, %v", c.ttl, got, ok, c.want, c.ok)
		}
	}
}

func TestParseMetaStoredAndDeleted(t *testing.T) {
	if ok, cas, err := ParseMetaStored([]byte("HD c42\r\n")); !ok || cas != 42 || err != nil {
		t.Errorf("HD c42: %v, %d, %v", ok, cas, err)
	}
	for _, other := range []string{"NS\r\n", "EX\r\n", "NF\r\n"} { // another value is there, or none
		if ok, _, err := ParseMetaStored([]byte(other)); ok || err != nil {
			t.Errorf("%q: %v, %v", other, ok, err)
		}
	}
	if cas, ok, err := ParseMetaCas([]byte("HD c7\r\n")); !ok || cas != 7 || err != nil {
		t.Errorf("HD c7: %d, %v, %v", cas, ok, err)
	}
	if _, ok, err := ParseMetaCas([]byte("EN\r\n")); ok || err != nil {
		t.Errorf("EN: %v, %v", ok, err)
	}
	for _, bad := range []string{"HD\r\n", "HD cx\r\n", "VA 1\r\nx\r\n", "SERVER_ERROR x\r\n"} {
		if _, _, err := ParseMetaCas([]byte(bad)); !errors.Is(err, ErrBadReply) {
			t.Errorf("ParseMetaCas(%q): %v; want ErrBadReply", bad, err)
		}
	}
	if n, ok, err := ParseMetaSize([]byte("HD s100\r\n")); !ok || n != 100 || err != nil { // memcached 1.6's reply to mg k s
		t.Errorf("HD s100: %d, %v, %v", n, ok, err)
	}
	if _, ok, err := ParseMetaSize([]byte("EN\r\n")); ok || err != nil {
		t.Errorf("EN: %v, %v", ok, err)
	}
	for _, bad := range []string{"HD\r\n", "HD s\r\n", "HD c7\r\n", "SERVER_ERROR x\r\n"} {
		if _, _, err := ParseMetaSize([]byte(bad)); !errors.Is(err, ErrBadReply) {
			t.Errorf("ParseMetaSize(%q): %v; want ErrBadReply", bad, err)
		}
	}
	for _, bad := range []string{"HD\r\n", "HD c\r\n", "HD cx\r\n", "SERVER_ERROR x\r\n", "HD c1"} {
		if _, _, err := ParseMetaStored([]byte(bad)); !errors.Is(err, ErrBadReply) {
			t.Errorf("%q: %v; want ErrBadReply", bad, err)
		}
	}
	for reply, want := range map[string]int{"HD\r\n": Deleted, "NF\r\n": NotFound, "EX\r\n": Exists} {
		if got, err := ParseMetaDeleted([]byte(reply)); got != want || err != nil {
			t.Errorf("%q: %d, %v", reply, got, err)
		}
	}
	if _, err := ParseMetaDeleted([]byte("DELETED\r\n")); !errors.Is(err, ErrBadReply) {
		t.Errorf("DELETED: %v", err)
	}
}

func TestMetaEncoders(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{string(AppendMetaFetch(nil, []byte("k"), false)), "mg k t f v\r\n"},
		{string(AppendMetaFetch(nil, []byte("aw=="), true)), "mg aw== t f v b\r\n"},
		{string(AppendMetaAdd(nil, []byte("k"), false, 0, 7, []byte("abc"))), "ms k 3 T0 F7 ME c\r\nabc\r\n"},
		{string(AppendMetaAdd(nil, []byte("aw=="), true, 30, 0, nil)), "ms aw== 0 T30 F0 ME c b\r\n\r\n"},
		{string(AppendMetaCas(nil, []byte("k"), false)), "mg k c\r\n"},
		{string(AppendMetaSize(nil, []byte("k"), false)), "mg k s\r\n"},
		{string(AppendMetaSize(nil, []byte("aw=="), true)), "mg aw== s b\r\n"},
		{string(AppendMetaReplace(nil, []byte("k"), false, 0, 7, []byte("abc"), 12)), "ms k 3 T0 F7 C12 c\r\nabc\r\n"},
		{string(AppendMetaReplace(nil, []byte("aw=="), true, 30, 0, nil, 1)), "ms aw== 0 T30 F0 C1 c b\r\n\r\n"},
		{string(AppendMetaDelete(nil, []byte("k"), false, 0)), "md k\r\n"},
		{string(AppendMetaDelete(nil, []byte("aw=="), true, 9)), "md aw== C9 b\r\n"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

func TestKeyToken(t *testing.T) {
	long := bytes.Repeat([]byte{'\t'}, 200) // base64 of it is over 250 bytes
	for _, c := range []struct {
		name      string
		key       []byte
		b64, ok   bool
		asItIsToo bool
	}{
		{"plain", []byte("user:42"), false, true, true},
		{"UTF-8", []byte("ключ"), false, true, true},
		{"control byte", []byte("a\x01b"), true, true, false},
		{"space", []byte("a b"), true, true, false},
		{"long with tabs", long, false, true, true},
		{"long with a space", append(bytes.Repeat([]byte{'x'}, 240), ' '), false, false, false},
		{"too long", bytes.Repeat([]byte{'x'}, 251), false, false, false},
		{"empty", nil, false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tok, b64, ok := KeyToken(nil, c.key)
			if ok != c.ok || b64 != c.b64 {
				t.Fatalf("%q: base64 %v ok %v; want %v %v", tok, b64, ok, c.b64, c.ok)
			}
			if !ok {
				return
			}
			back := tok
			if b64 {
				var err error
				if back, err = base64.StdEncoding.DecodeString(string(tok)); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(back, c.key) || len(tok) > MaxKeyLen {
				t.Errorf("token %q for %q", tok, c.key)
			}
		})
	}
}

// FuzzMetaReplies: no reply panics the parsers of the proxy's own meta
// commands; a value read back is the one encoded.
func FuzzMetaReplies(f *testing.F) {
	f.Add([]byte("VA 3 t-1 f7\r\nabc\r\n"), int64(-1), uint32(7))
	f.Add([]byte("EN\r\n"), int64(100), uint32(0))
	f.Add([]byte("HD c42\r\n"), int64(0), uint32(1))
	f.Add([]byte("VA 99999999999 t1 f1\r\n"), int64(5), uint32(9))
	f.Fuzz(func(t *testing.T, reply []byte, ttl int64, flags uint32) {
		_, _, _ = ParseMetaValue(reply)
		_, _, _ = ParseMetaStored(reply)
		_, _ = ParseMetaDeleted(reply)
		_, _, _ = KeyToken(nil, reply)
		if ttl < -1 {
			return
		}
		enc := []byte("VA " + itoa(int64(len(reply))) + " t" + itoa(ttl) + " f" + itoa(int64(flags)) + "\r\n")
		enc = append(append(enc, reply...), "\r\n"...)
		v, hit, err := ParseMetaValue(enc)
		if err != nil || !hit || v.TTL != ttl || v.Flags != flags || !bytes.Equal(v.Data, reply) {
			t.Fatalf("%q: %+v, %v, %v", enc, v, hit, err)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
