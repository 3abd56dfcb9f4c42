package haproxy

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kolco-dev/kolco"
)

const wholeConfig = `
global
    maxconn 100
    # a "server" in a ring or peers section is not a backend's
ring logs
    server log1 127.0.0.1:514
defaults
    mode http
    hash-type consistent djb2
    default-server weight 2
frontend fe
    bind :80
    default_backend app
backend app
    balance hdr(X-Key)
    server a 10.0.0.1:80
    server b 10.0.0.2:80 weight 5
listen stats
    bind :8404
    stats enable
defaults tuned
    hash-type map-based crc32
backend cache
    server c 10.0.0.3:80 id 4
backend legacy from tuned   # the named defaults, not the last
    hash-type consistent
    server d 10.0.0.4:80
defaults after from tuned
    default-server weight 7
backend weighted
    server e 10.0.0.5:80
    server f 10.0.0.6:80 disabled
`

func TestParseConfig(t *testing.T) {
	sections := ParseConfig(wholeConfig)
	var names []string
	for _, s := range sections {
		names = append(names, s.Name)
	}
	if fmt.Sprint(names) != "[app cache legacy weighted]" {
		t.Fatalf("sections with servers = %v, want [app cache legacy weighted]", names)
	}
	for _, c := range []struct {
		want Backend
	}{
		{Backend{Name: "app", Hash: HashType{Type: Consistent, Func: DJB2}, Servers: []Server{
			{Name: "a", Addr: "10.0.0.1:80", Weight: 2}, {Name: "b", Addr: "10.0.0.2:80", Weight: 5}}}},
		{Backend{Name: "cache", Hash: HashType{Type: MapBased, Func: CRC32}, Servers: []Server{
			{Name: "c", Addr: "10.0.0.3:80", Weight: 1, ID: 4}}}},
		{Backend{Name: "legacy", Hash: HashType{Type: Consistent, Avalanche: true}, Servers: []Server{
			{Name: "d", Addr: "10.0.0.4:80", Weight: 1}}}},
	} {
		t.Run(c.want.Name, func(t *testing.T) {
			i := 0
			for sections[i].Name != c.want.Name {
				i++
			}
			b, err := sections[i].Backend()
			if err != nil || fmt.Sprint(b) != fmt.Sprint(c.want) {
				t.Errorf("Backend() = %+v, %v\nwant %+v", b, err, c.want)
			}
		})
	}
	// The last backend's disabled server is refused only when it is read.
	if _, err := sections[3].Backend(); !errors.Is(err, kolco.ErrBadConfig) {
		t.Errorf("weighted: err = %v, want ErrBadConfig for the disabled server", err)
	}
}

func TestParseConfigBare(t *testing.T) {
	text := "hash-type consistent\nserver a 10.0.0.1:80\n"
	sections := ParseConfig(text)
	if len(sections) != 1 || sections[0].Name != "" {
		t.Fatalf("ParseConfig(bare lines) = %+v, want one unnamed section", sections)
	}
	got, err := sections[0].Backend()
	want, err2 := ParseBackend(text)
	if err != nil || err2 != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Backend() = %+v, %v; ParseBackend = %+v, %v", got, err, want, err2)
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		text string
		want error
	}{
		{"unknown from", "backend a from nowhere\n  server s 1.2.3.4:80\n", kolco.ErrBadConfig},
		{"defaults from nowhere", "defaults d from nowhere\nbackend a\n  server s 1.2.3.4:80\n", kolco.ErrBadConfig},
		{"bad inherited hash-type", "defaults\n  hash-type rainbow\nbackend a\n  server s 1.2.3.4:80\n", kolco.ErrBadConfig},
		{"inherited bounded loads", "defaults\n  hash-balance-factor 150\nbackend a\n  server s 1.2.3.4:80\n", kolco.ErrBadConfig},
		{"server template", "backend a\n  server-template s 3 db.local:80\n", kolco.ErrBadConfig},
	} {
		t.Run(c.name, func(t *testing.T) {
			sections := ParseConfig(c.text)
			if len(sections) != 1 {
				t.Fatalf("%d sections, want 1", len(sections))
			}
			if _, err := sections[0].Backend(); !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add(wholeConfig)                                        // a whole haproxy.cfg
	f.Add("backend b\n  server s 1.2.3.4:80 weight 3\n")      // one backend
	f.Add("server s 1.2.3.4:80\n")                            // bare lines
	f.Add("defaults d from d\nbackend b from d\n server s x") // a defaults naming itself
	f.Fuzz(func(t *testing.T, text string) {
		for _, s := range ParseConfig(text) {
			b, err := s.Backend()
			if err != nil {
				if !errors.Is(err, kolco.ErrBadConfig) && !errors.Is(err, kolco.ErrBadWeight) && !errors.Is(err, kolco.ErrNoNodes) {
					t.Fatalf("section %q: error %v wraps no sentinel", s.Name, err)
				}
				continue
			}
			if len(b.Servers) == 0 {
				t.Fatalf("section %q read without servers", s.Name)
			}
		}
	})
}
