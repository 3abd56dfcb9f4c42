package sentinel

import (
	"bufio"
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/resp"
	"github.com/kolco-dev/kolco/membership"
)

func master(fields ...string) resp.Value {
	v := resp.Value{Kind: '*'}
	for _, f := range fields {
		v.Elems = append(v.Elems, resp.Value{Kind: '$', Str: f})
	}
	return v
}

func TestParseMaster(t *testing.T) {
	p, err := parseMaster(master("name", "a", "ip", "10.0.0.1", "port", "6380", "flags", "master", "config-epoch", "7", "down-after-milliseconds", "1500"))
	if err != nil || p.addr != "10.0.0.1:6380" || p.epoch != 7 || p.downAfter != 1500*time.Millisecond {
		t.Errorf("%+v, %v", p, err)
	}
	if p, err := parseMaster(master("ip", "::1", "port", "6379")); err != nil || p.addr != "[::1]:6379" || p.downAfter != 0 {
		t.Errorf("IPv6: %+v, %v", p, err)
	}
	for name, v := range map[string]resp.Value{
		"odd":       master("ip"),
		"no port":   master("ip", "10.0.0.1"),
		"bad port":  master("ip", "10.0.0.1", "port", "0"),
		"no ip":     master("port", "6379"),
		"space":     master("ip", "a b", "port", "1"),
		"not array": {Kind: ':', Int: 1},
	} {
		if _, err := parseMaster(v); !errors.Is(err, membership.ErrBadContent) {
			t.Errorf("%s: %v, want ErrBadContent", name, err)
		}
	}
}

// FuzzParseMaster: any reply a Sentinel may send gives an address that
// parses back or a bad-content error, never a panic.
func FuzzParseMaster(f *testing.F) {
	f.Add([]byte("*4\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n$4\r\nport\r\n$4\r\n6379\r\n"))
	f.Add([]byte("*2\r\n$2\r\nip\r\n:1\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := resp.Read(bufio.NewReader(bytes.NewReader(in)))
		if err != nil {
			return
		}
		p, err := parseMaster(v)
		if err == nil && p.addr == "" {
			t.Fatal("no address and no error")
		}
		if err != nil && !errors.Is(err, membership.ErrBadContent) {
			t.Fatalf("error %v not bad content", err)
		}
	})
}
