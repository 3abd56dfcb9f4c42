package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMembersGossipUsage: flags that do not go with --gossip, or that need
// it, are usage errors (exit 2) naming the flag; so is a key file without
// a valid key.
func TestMembersGossipUsage(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.keys")
	if err := os.WriteFile(bad, []byte("c2hvcnQ=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"members", "register", "--gossip", "127.0.0.1:0", "--ttl", "5s", "m1", "127.0.0.1:11211"}, "--ttl"},
		{[]string{"members", "--prefix", "/k/", "register", "--gossip", "127.0.0.1:0", "m1", "127.0.0.1:11211"}, "--prefix"},
		{[]string{"members", "register", "--seed", "127.0.0.1:1", "m1", "127.0.0.1:11211"}, "--seed"},
		{[]string{"members", "register", "--gossip", "127.0.0.1:0", "--key-file", bad, "m1", "127.0.0.1:11211"}, "--key-file"},
		{[]string{"members", "register", "--gossip", "nohost", "m1", "127.0.0.1:11211"}, "bind"},
		{[]string{"members", "register", "--gossip", "127.0.0.1:0", "--probe-interval", "0s", "m1", "127.0.0.1:11211"}, "--probe-interval"},
		{[]string{"members", "list", "--gossip", "127.0.0.1:0"}, "--seed"},
		{[]string{"members", "list", "--gossip", "127.0.0.1:0", "--dns", "x"}, "--gossip"},
		{[]string{"members", "list", "--label", "x"}, "--label"},
	} {
		t.Run(strings.Join(c.args[1:], " "), func(t *testing.T) {
			code, _, errs := runCLI(t, "", c.args...)
			if code != 2 || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 naming %s", code, errs, c.want)
			}
		})
	}
}
