package twemproxy_test

import (
	"errors"
	"testing"

	"github.com/kolco-dev/kolco/compat/twemproxy"
)

func TestParseServer(t *testing.T) {
	cases := []struct {
		line string
		want twemproxy.Server
		ring string
	}{
		{"127.0.0.1:11211:1", twemproxy.Server{Host: "127.0.0.1", Port: 11211, Weight: 1}, "127.0.0.1"},
		{"127.0.0.1:11212:3", twemproxy.Server{Host: "127.0.0.1", Port: 11212, Weight: 3}, "127.0.0.1:11212"},
		{"10.0.0.1:11211:2 cache-a", twemproxy.Server{Host: "10.0.0.1", Port: 11211, Weight: 2, Name: "cache-a"}, "cache-a"},
		{"localhost:6379:1 srv:x", twemproxy.Server{Host: "localhost", Port: 6379, Weight: 1, Name: "srv:x"}, "srv:x"},
		{"::1:11212:1", twemproxy.Server{Host: "::1", Port: 11212, Weight: 1}, "::1:11212"},
		{"h:011212:1", twemproxy.Server{Host: "h", Port: 11212, Weight: 1, Name: "h:011212"}, "h:011212"},
		{"h:011211:1", twemproxy.Server{Host: "h", Port: 11211, Weight: 1}, "h"},
		{"h:1:007", twemproxy.Server{Host: "h", Port: 1, Weight: 7}, "h:1"},
		{"/tmp/mc.sock:2", twemproxy.Server{Host: "/tmp/mc.sock", Weight: 2}, "/tmp/mc.sock:"},
		{"/tmp/mc.sock:1 sock", twemproxy.Server{Host: "/tmp/mc.sock", Weight: 1, Name: "sock"}, "sock"},
		{"h:65535:2147483647", twemproxy.Server{Host: "h", Port: 65535, Weight: 2147483647}, "h:65535"},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			got, err := twemproxy.ParseServer(c.line)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("ParseServer = %+v, want %+v", got, c.want)
			}
			if r := got.RingName(); r != c.ring {
				t.Errorf("RingName() = %q, want %q", r, c.ring)
			}
		})
	}
}

func TestParseServerErrors(t *testing.T) {
	for _, line := range []string{
		"", "h", "h:1", "h:1:0", "h:0:1", "h:65536:1", "h:x:1", "h:1:x", "h:1:-1",
		"h:1:1 ", ":1:1", "h:1:1 a b", "h:1: 1", "/sock", "/so:ck:1", "h:1:2147483648",
		"h:1:1\x00", "h:+1:1",
	} {
		t.Run(line, func(t *testing.T) {
			if s, err := twemproxy.ParseServer(line); !errors.Is(err, twemproxy.ErrBadServer) {
				t.Errorf("ParseServer = %+v, %v; want ErrBadServer", s, err)
			}
		})
	}
}

// TestServerStringRoundTrip checks that String writes a line ParseServer
// reads back to the same server.
func TestServerStringRoundTrip(t *testing.T) {
	for _, s := range []twemproxy.Server{
		{Host: "127.0.0.1", Port: 11211, Weight: 1},
		{Host: "a.example", Port: 22122, Weight: 9, Name: "x"},
		{Host: "/run/mc.sock", Weight: 3},
		{Host: "fe80::1", Port: 1, Weight: 1},
	} {
		t.Run(s.String(), func(t *testing.T) {
			got, err := twemproxy.ParseServer(s.String())
			if err != nil || got != s {
				t.Errorf("ParseServer = %+v, %v; want %+v", got, err, s)
			}
		})
	}
}

func FuzzParseServer(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1:11211:1",        // the usual line
		"10.0.0.1:11212:2 cache-a", // with a name
		"::1:11211:1",              // IPv6 without brackets
		"/tmp/mc.sock:1 sock",      // unix socket
		"h:011212:1",               // port with a leading zero
		"h:1:1 a b",                // name after the last space only
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		s, err := twemproxy.ParseServer(line)
		if err != nil {
			if !errors.Is(err, twemproxy.ErrBadServer) {
				t.Fatalf("ParseServer(%q): error %v does not wrap ErrBadServer", line, err)
			}
			return
		}
		if s.Host == "" || s.Weight < 1 || s.Port < 0 || s.Port > 65535 {
			t.Fatalf("ParseServer(%q) = %+v", line, s)
		}
		// A parsed server is a valid one-server pool, and its line reads back
		// to the same ring name.
		if _, err := twemproxy.New(twemproxy.Config{}, []twemproxy.Server{s}); err != nil {
			t.Fatalf("New(%+v): %v", s, err)
		}
		again, err := twemproxy.ParseServer(s.String())
		if err != nil || again.RingName() != s.RingName() {
			t.Fatalf("ParseServer(%q) = %+v, %v; ring name %q, want %q", s.String(), again, err, again.RingName(), s.RingName())
		}
	})
}
