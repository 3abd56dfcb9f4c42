package gossip

import (
	"errors"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
)

func TestMetaRoundTrip(t *testing.T) {
	for _, m := range []Meta{
		{Role: RoleObserver},
		{Role: RoleNode, Node: kolco.Node{ID: "mc1", Addr: "127.0.0.1:11211"}},
		{Role: RoleNode, Node: kolco.Node{ID: "mc2", Addr: "10.0.0.2:11211", Weight: 2.5, Zone: "eu-1"}, Drained: true},
	} {
		t.Run(m.Role+"/"+m.Node.ID, func(t *testing.T) {
			b, err := EncodeMeta(m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseMeta(b)
			if err != nil || got != m {
				t.Fatalf("ParseMeta(%s) = %+v, %v; want %+v", b, got, err, m)
			}
		})
	}
}

func TestParseMetaRefuses(t *testing.T) {
	for _, c := range []struct{ name, in string }{
		{"empty", ``},
		{"not json", `node mc1`},
		{"other version", `{"v":2,"role":"observer"}`},
		{"no version", `{"role":"observer"}`},
		{"unknown role", `{"v":1,"role":"leader"}`},
		{"unknown key", `{"v":1,"role":"observer","x":1}`},
		{"node without id", `{"v":1,"role":"node","addr":"a:1"}`},
		{"node without addr", `{"v":1,"role":"node","id":"mc1"}`},
		{"negative weight", `{"v":1,"role":"node","id":"mc1","addr":"a:1","weight":-1}`},
		{"observer with node", `{"v":1,"role":"observer","id":"mc1"}`},
		{"trailing data", `{"v":1,"role":"observer"}{}`},
		{"too long", `{"v":1,"role":"node","id":"` + strings.Repeat("x", MaxMetaSize) + `","addr":"a:1"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if m, err := ParseMeta([]byte(c.in)); !errors.Is(err, membership.ErrBadContent) {
				t.Fatalf("ParseMeta(%q) = %+v, %v; want an error wrapping ErrBadContent", c.in, m, err)
			}
		})
	}
}

func TestEncodeMetaRefusesTooLong(t *testing.T) {
	m := Meta{Role: RoleNode, Node: kolco.Node{ID: strings.Repeat("n", 600), Addr: "a:1"}}
	if _, err := EncodeMeta(m); !errors.Is(err, membership.ErrBadContent) {
		t.Fatalf("EncodeMeta of a 600-byte ID: %v; want ErrBadContent", err)
	}
}

// FuzzParseMeta: whatever another member sends, ParseMeta returns an error
// or metadata that encodes back to what parses the same.
func FuzzParseMeta(f *testing.F) {
	f.Add([]byte(`{"v":1,"role":"observer"}`))                                                        // a proxy
	f.Add([]byte(`{"v":1,"role":"node","id":"mc1","addr":"127.0.0.1:11211"}`))                        // a sidecar
	f.Add([]byte(`{"v":1,"role":"node","id":"m","addr":"a:1","weight":2,"zone":"z","drained":true}`)) // every field
	f.Add([]byte(`{"v":1,"role":"node","id":"m","addr":"a:1","weight":1e309}`))                       // an infinite weight
	f.Add([]byte(`{"v":1,"role":"node","id":"m","addr":"a:1","weight":-0}`))                          // negative zero
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMeta(b)
		if err != nil {
			if !errors.Is(err, membership.ErrBadContent) {
				t.Fatalf("ParseMeta(%q): %v does not wrap ErrBadContent", b, err)
			}
			return
		}
		enc, err := EncodeMeta(m)
		if err != nil {
			t.Fatalf("ParseMeta(%q) = %+v, which does not encode: %v", b, m, err)
		}
		if again, err := ParseMeta(enc); err != nil || again != m {
			t.Fatalf("%q -> %+v -> %s -> %+v, %v", b, m, enc, again, err)
		}
	})
}

func TestParseKeys(t *testing.T) {
	keys, err := ParseKeys([]byte("# the key in use first\nAAECAwQFBgcICQoLDA0ODw==\n\n  MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=  \n"))
	if err != nil || len(keys) != 2 || len(keys[0]) != 16 || len(keys[1]) != 32 {
		t.Fatalf("ParseKeys: %d keys, %v", len(keys), err)
	}
	for _, c := range []struct{ name, in string }{
		{"empty", ""},
		{"comments only", "# none\n"},
		{"not base64", "not a key!\n"},
		{"short", "AAECAwQ=\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := ParseKeys([]byte(c.in)); !errors.Is(err, membership.ErrBadConfig) {
				t.Fatalf("ParseKeys(%q): %v; want ErrBadConfig", c.in, err)
			}
		})
	}
}

// FuzzParseKeys: a key file gives an error or keys of AES's lengths.
func FuzzParseKeys(f *testing.F) {
	f.Add([]byte("AAECAwQFBgcICQoLDA0ODw==\n"))                                               // one AES-128 key
	f.Add([]byte("# rotate\nAAECAwQFBgcICQoLDA0ODw==\r\nAAECAwQFBgcICQoLDA0ODwABAgMEBQYH\n")) // two, CRLF
	f.Add([]byte("====\n"))                                                                   // base64 padding alone
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, err := ParseKeys(b)
		if err != nil {
			if !errors.Is(err, membership.ErrBadConfig) {
				t.Fatalf("ParseKeys: %v does not wrap ErrBadConfig", err)
			}
			return
		}
		for _, k := range keys {
			if checkKey(k) != nil {
				t.Fatalf("ParseKeys(%q) gave a key of %d bytes", b, len(k))
			}
		}
	})
}
