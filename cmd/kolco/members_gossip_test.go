package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
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
		{[]string{"members", "--prefix", "/k/", "register", "--drained", "m1", "127.0.0.1:11211"}, "--drained"},
	} {
		t.Run(strings.Join(c.args[1:], " "), func(t *testing.T) {
			code, _, errs := runCLI(t, "", c.args...)
			if code != 2 || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 naming %s", code, errs, c.want)
			}
		})
	}
}

// TestMembersRegisterUsage: the usage line shows --seed as optional with
// --gossip: the first member of a pool has none.
func TestMembersRegisterUsage(t *testing.T) {
	code, out, errs := runCLI(t, "", "members", "register", "--help")
	if code != 0 || !strings.Contains(out, "--gossip HOST:PORT [--seed HOST:PORT]") {
		t.Errorf("members register --help: exit %d\n%s%s\nwant a usage line with --seed optional", code, out, errs)
	}
}

// TestMembersRegisterGossipDrained: a node registered --drained is listed
// drained by "members list --gossip", beside a serving one, with its
// weight and zone.
func TestMembersRegisterGossipDrained(t *testing.T) {
	f := &gossipFleet{tuning: fastGossip, sidecars: map[string]*sidecar{}, keyFile: filepath.Join(t.TempDir(), "gossip.keys"),
		servers: []string{"127.0.0.1:11211", "127.0.0.1:11212"}}
	if err := os.WriteFile(f.keyFile, []byte(gossipKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	seed := f.startSidecar(t, "m0")
	f.startSidecar(t, "m1", "--drained", "--weight", "2", "--zone", "z1")
	var out, errs string
	eventually(t, "m1 listed drained", func() bool {
		var code int
		code, out, errs = runCLI(t, "", append([]string{"members", "list", "--gossip", fmt.Sprintf("127.0.0.1:%d", realprog.FreePorts(t, 1)[0]),
			"--seed", seed.gossip, "--key-file", f.keyFile}, f.tuning.flags()...)...)
		return code == 0 && hasLine(out, "m1", "2", "z1", "drained") && hasLine(out, "m0", "serving")
	})
	t.Logf("members list --gossip:\n%s%s", out, errs)
}

// TestMembersGossipWrongKey: a sidecar whose key file is not the pool's
// says it cannot join - the seed answers but refuses it, a matter of key
// or label - and exits 1, without ever saying it registered; "members
// list --gossip" with that key says the same at once.
func TestMembersGossipWrongKey(t *testing.T) {
	f := &gossipFleet{tuning: fastGossip, sidecars: map[string]*sidecar{}, keyFile: filepath.Join(t.TempDir(), "gossip.keys"),
		servers: []string{"127.0.0.1:11211", "127.0.0.1:11212"}}
	if err := os.WriteFile(f.keyFile, []byte(gossipKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	seed := f.startSidecar(t, "m0")
	wrong := filepath.Join(t.TempDir(), "wrong.keys")
	if err := os.WriteFile(wrong, []byte("ZmVkY2JhOTg3NjU0MzIxMA==\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"members", "register", "--gossip", fmt.Sprintf("127.0.0.1:%d", realprog.FreePorts(t, 1)[0]),
		"--seed", seed.gossip, "--key-file", wrong}, f.tuning.flags()...)
	cmd := program(t, "kolco", append(args, "m1", "127.0.0.1:11212")...)
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("a sidecar with another key: %v, want exit 1", err)
		}
	case <-time.After(30 * time.Second): // it would hold until stopped
		_ = cmd.Process.Kill()
		<-exited
		t.Errorf("a sidecar with another key still runs 30 s after it started")
	}
	if strings.Contains(stdout.String(), "registered") || !strings.Contains(stderr.String(), "key file") {
		t.Errorf("a sidecar with another key said:\n%s%s\nwant no registration and a word on the key file", stdout.String(), stderr.String())
	}
	t.Logf("register with another key:\n%s%s", stdout.String(), stderr.String())

	code, out, errs := runCLI(t, "", append([]string{"members", "list", "--gossip", fmt.Sprintf("127.0.0.1:%d", realprog.FreePorts(t, 1)[0]),
		"--seed", seed.gossip, "--key-file", wrong}, f.tuning.flags()...)...)
	if code != 1 || !strings.Contains(errs, "key file") {
		t.Errorf("members list --gossip with another key: exit %d\n%s%s\nwant exit 1 and a word on the key file", code, out, errs)
	}
	t.Logf("list with another key: %s", errs)
}
