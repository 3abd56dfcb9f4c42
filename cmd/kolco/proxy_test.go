package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/proxy"
)

func runProxyCmd(args ...string) (string, error) {
	cmd := newProxyCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestProxyCheckExplains(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nutcracker.yml")
	conf := "alpha:\n  listen: 127.0.0.1:22121\n  hash: fnv1a_64\n  distribution: ketama\n" +
		"  auto_eject_hosts: true\n  servers:\n   - 127.0.0.1:11211:1\n   - 127.0.0.1:11212:1 b\n"
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runProxyCmd("--check", "--config", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`pool "alpha": memcached on 127.0.0.1:22121`, `ring name "b"`, "(rehash)"} {
		if !strings.Contains(out, want) {
			t.Errorf("--check output lacks %q:\n%s", want, out)
		}
	}
}

func TestProxyCheckErrors(t *testing.T) {
	if _, err := runProxyCmd("--check"); !errors.As(err, new(usageError)) {
		t.Fatalf("no --config: %v, want a usage error", err)
	}
	path := filepath.Join(t.TempDir(), "bad.yml")
	if err := os.WriteFile(path, []byte("p:\n  listen: 127.0.0.1:1\n  servers: [\"x:1:0\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runProxyCmd("--check", "--config", path); !errors.Is(err, proxy.ErrBadConfig) {
		t.Fatalf("bad config: %v, want ErrBadConfig", err)
	}
}
