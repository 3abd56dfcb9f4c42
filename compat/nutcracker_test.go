package compat_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// TestReadNutcracker: pools in the file's order with their placement keys
// and parsed servers, the kolco key apart, other keys left in the node.
func TestReadNutcracker(t *testing.T) {
	f, err := compat.ReadNutcracker([]byte(`
beta:
  listen: 127.0.0.1:22122
  hash: md5
  hash_tag: "{}"
  distribution: modula
  servers: ["10.0.0.1:11211:2 a", "/tmp/m.sock:1"]
kolco:
  log_level: debug
alpha:
  servers: [10.0.0.2:11212:1]
  warm: {enabled: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{f.Pools[0].Name, f.Pools[1].Name}; len(f.Pools) != 2 || !slices.Equal(got, []string{"beta", "alpha"}) {
		t.Fatalf("pools %v, want beta then alpha", got)
	}
	b := f.Pools[0]
	want := []twemproxy.Server{{Host: "10.0.0.1", Port: 11211, Weight: 2, Name: "a"}, {Host: "/tmp/m.sock", Weight: 1}}
	if b.Hash != "md5" || b.HashTag != "{}" || b.Distribution != "modula" || !slices.Equal(b.Servers, want) {
		t.Errorf("beta: %+v", b)
	}
	if f.Kolco == nil || f.Kolco.Content[0].Value != "log_level" {
		t.Errorf("the kolco key: %+v", f.Kolco)
	}
	if p, err := f.Pool("alpha"); err != nil || p.Node.Content[2].Value != "warm" {
		t.Errorf("alpha's node keeps its other keys: %+v, %v", p, err)
	}
	if _, err := f.Pool(""); !errors.Is(err, kolco.ErrBadConfig) {
		t.Errorf("the only pool of two: %v", err)
	}
	if !slices.Equal(f.Names(), []string{"alpha", "beta"}) {
		t.Errorf("names %v", f.Names())
	}
}

// TestReadNutcrackerErrors: each error names the pool, key and line at
// fault.
func TestReadNutcrackerErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		pool, key  string
		line       int
	}{
		{"bad server", "p:\n  servers:\n   - 10.0.0.1:11211:1\n   - nonsense\n", "p", "servers", 4},
		{"pool given twice", "p:\n  servers: []\np:\n  servers: []\n", "p", "", 3},
		{"pool not a mapping", "p: 5\n", "p", "", 1},
		{"file not a mapping", "- a\n- b\n", "", "", 1},
		{"servers not a list", "p:\n  servers: 5\n", "p", "", 2},
		{"not yaml", "p: [\n", "", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compat.ReadNutcracker([]byte(tc.yaml))
			var ne *compat.NutcrackerError
			if !errors.As(err, &ne) || !errors.Is(err, kolco.ErrBadConfig) {
				t.Fatalf("%v: want a *NutcrackerError wrapping ErrBadConfig", err)
			}
			if ne.Pool != tc.pool || ne.Key != tc.key || ne.Line != tc.line {
				t.Errorf("%v: pool %q key %q line %d, want %q %q %d", err, ne.Pool, ne.Key, ne.Line, tc.pool, tc.key, tc.line)
			}
		})
	}
}

// FuzzReadNutcracker: any input is read or refused with a
// *NutcrackerError, never a panic, and every pool read has parsed servers
// that print back to lines that parse alike.
func FuzzReadNutcracker(f *testing.F) {
	for _, s := range []string{
		"p:\n  servers: [\"127.0.0.1:11211:1 a\"]\n",
		"kolco: {log_level: info}\np:\n  hash: md5\n  servers: [/tmp/s:1]\n",
		"p: &a\n  servers: []\nq: *a\n",
		"p:\n  servers:\n   - 10.0.0.1\n",
		"",
		"[",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		file, err := compat.ReadNutcracker([]byte(data))
		if err != nil {
			var ne *compat.NutcrackerError
			if !errors.As(err, &ne) {
				t.Fatalf("%v is not a *NutcrackerError", err)
			}
			return
		}
		for _, p := range file.Pools {
			for _, s := range p.Servers {
				back, err := twemproxy.ParseServer(s.String())
				if err != nil || back != s {
					t.Fatalf("%+v prints as %q, which reads %+v, %v", s, s.String(), back, err)
				}
			}
		}
	})
}
