package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/membership/dns/dnstest"
	"github.com/kolco-dev/kolco/membership/etcd"
	"github.com/kolco-dev/kolco/membership/etcdtest"
)

// membersCLI runs "kolco members" against the etcd server with a prefix
// of the test's own.
func membersCLI(t *testing.T, srv *etcdtest.Server, args ...string) (int, string, string) {
	t.Helper()
	return runCLI(t, "", append([]string{"members", "--endpoints", srv.Endpoint, "--prefix", "/kolco/" + t.Name() + "/"}, args...)...)
}

// listJSON runs "members list --json" and decodes it.
func listJSON(t *testing.T, srv *etcdtest.Server) listing {
	t.Helper()
	code, out, errs := membersCLI(t, srv, "list", "--json")
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, errs)
	}
	var l listing
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	return l
}

func TestMembersEtcd(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Config{})
	for _, step := range [][]string{
		{"add", "a", "--addr", "10.0.0.1:11211", "--weight", "2", "--zone", "z1"},
		{"add", "b", "--addr", "10.0.0.2:11211"},
		{"add", "c"},
		{"reweight", "b", "3"},
		{"drain", "a"},
		{"remove", "c"},
	} {
		if code, out, errs := membersCLI(t, srv, step...); code != 0 || errs != "" || !strings.Contains(out, "(revision ") {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", step, code, out, errs)
		}
	}
	got := listJSON(t, srv)
	want := []listed{
		{ID: "a", Weight: 2, Zone: "z1", Addr: "10.0.0.1:11211", Drained: true},
		{ID: "b", Weight: 3, Addr: "10.0.0.2:11211"},
	}
	if fmt.Sprint(got.Nodes) != fmt.Sprint(want) {
		t.Errorf("nodes %+v\nwant %+v", got.Nodes, want)
	}
	store, err := etcd.New(etcd.Config{Endpoints: []string{srv.Endpoint}, Prefix: "/kolco/" + t.Name() + "/"})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if snap, err := store.List(context.Background()); err != nil || snap.Revision != got.Revision {
		t.Errorf("listed revision %d, the store is at %d (%v)", got.Revision, snap.Revision, err)
	}

	code, out, _ := membersCLI(t, srv, "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[0], "etcd ") || !strings.HasPrefix(lines[1], "ID ") ||
		!strings.HasPrefix(lines[2], "a ") || !strings.Contains(lines[2], "drained") || !strings.HasPrefix(lines[3], "b ") {
		t.Errorf("table (exit %d):\n%s", code, out)
	}

	membersCLI(t, srv, "drain", "--undo", "a")
	if l := listJSON(t, srv); len(l.Nodes) != 2 || l.Nodes[0].Drained {
		t.Errorf("after drain --undo: %+v", l.Nodes)
	}
	for _, c := range [][]string{{"add", "a"}, {"remove", "x"}, {"reweight", "x", "2"}, {"drain", "x"}} {
		code, _, errs := membersCLI(t, srv, c...)
		if code != 1 || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 1 and one line", c, code, errs)
		}
	}
}

func TestMembersUsageErrors(t *testing.T) {
	dir := t.TempDir()
	nodes := filepath.Join(dir, "nodes.txt")
	os.WriteFile(nodes, []byte("a\n"), 0o644)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"no prefix", []string{"list"}},
		{"prefix without a leading slash", []string{"--prefix", "kolco/cache", "--timeout", "100ms", "list"}},
		{"add without a name", []string{"--prefix", "/p/", "add"}},
		{"zero weight", []string{"--prefix", "/p/", "add", "a", "--weight", "0"}},
		{"name with a space", []string{"--prefix", "/p/", "add", "a b"}},
		{"weight not a number", []string{"--prefix", "/p/", "reweight", "a", "heavy"}},
		{"negative weight", []string{"--prefix", "/p/", "reweight", "a", "-1"}},
		{"remove nothing", []string{"--prefix", "/p/", "remove"}},
		{"TTL under a second", []string{"--prefix", "/p/", "register", "--ttl", "100ms", "a", "h:1"}},
		{"register without an address", []string{"--prefix", "/p/", "register", "a"}},
		{"user without a password", []string{"--prefix", "/p/", "--user", "root", "list"}},
		{"zero timeout", []string{"--prefix", "/p/", "--timeout", "0s", "list"}},
		{"a DNS flag without --dns", []string{"--prefix", "/p/", "list", "--port", "11211"}},
		{"an etcd flag with --file", []string{"--prefix", "/p/", "list", "--file", nodes}},
		{"file and DNS", []string{"list", "--file", nodes, "--dns", "x."}},
		{"pool without a file", []string{"list", "--pool", "alpha"}},
		{"pool of a node list", []string{"list", "--file", nodes, "--pool", "alpha"}},
		{"A records not declared stable", []string{"list", "--dns", "x.", "--records", "A", "--port", "1"}},
		{"DNS server without a port", []string{"list", "--dns", "x.", "--dns-server", "nohost"}},
		{"unknown subcommand", []string{"frobnicate"}},
	} {
		args := append([]string{"members"}, c.args...)
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runCLI(t, "", args...)
			if code != 2 || strings.Count(errs, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want 2 and one line", code, errs)
			}
		})
	}
}

func TestMembersListFileAndDNS(t *testing.T) {
	dir := t.TempDir()
	nodes := filepath.Join(dir, "nodes.txt")
	os.WriteFile(nodes, []byte("b 2 z1\na\n"), 0o644)
	yml := filepath.Join(dir, "nutcracker.yml")
	os.WriteFile(yml, []byte("alpha:\n  servers:\n   - 127.0.0.1:11211:1 mc-a\n"), 0o644)
	s := dnstest.Start(t)
	if err := s.Set(mdns.TypeSRV, "_mc._tcp.mc.example. 5 IN SRV 0 50 11211 mc-1.mc.example.", "_mc._tcp.mc.example. 5 IN SRV 0 50 11211 mc-0.mc.example."); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want []listed
	}{
		{"node file", []string{"--file", nodes}, []listed{{ID: "a", Weight: 1}, {ID: "b", Weight: 2, Zone: "z1"}}},
		{"nutcracker.yml", []string{"--file", yml, "--pool", "alpha"}, []listed{{ID: "mc-a", Weight: 1, Addr: "127.0.0.1:11211"}}},
		{"DNS SRV", []string{"--dns", "_mc._tcp.mc.example.", "--dns-server", s.Addr},
			[]listed{{ID: "mc-0.mc.example", Weight: 1, Addr: "mc-0.mc.example:11211"}, {ID: "mc-1.mc.example", Weight: 1, Addr: "mc-1.mc.example:11211"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", append([]string{"members", "list", "--json"}, c.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var l listing
			if err := json.Unmarshal([]byte(out), &l); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(l.Nodes) != fmt.Sprint(c.want) {
				t.Errorf("nodes %+v, want %+v", l.Nodes, c.want)
			}
		})
	}
	broken := filepath.Join(dir, "broken.txt")
	os.WriteFile(broken, []byte("a -1\n"), 0o644)
	if code, _, errs := runCLI(t, "", "members", "list", "--file", broken); code != 1 || strings.Count(errs, "\n") != 1 {
		t.Errorf("a broken file: exit %d, stderr %q; want 1 and one line", code, errs)
	}
}

func TestMembersUnreachable(t *testing.T) {
	port := realprog.FreePorts(t, 1)[0]
	code, _, errs := runCLI(t, "", "members", "--endpoints", fmt.Sprintf("http://127.0.0.1:%d", port), "--prefix", "/p/", "--timeout", "500ms", "list")
	if code != 1 || strings.Count(errs, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want 1 and one line", code, errs)
	}
}

// TestMembersRegister: the sidecar keeps its node registered under a lease
// while it runs, and removes it when stopped.
func TestMembersRegister(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Config{})
	prefix := "/kolco/" + t.Name() + "/"
	store, err := etcd.New(etcd.Config{Endpoints: []string{srv.Endpoint}, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	root := newRootCmd()
	var out, errs lockedBuffer
	root.SetOut(&out)
	root.SetErr(&errs)
	root.SetArgs([]string{"members", "--endpoints", srv.Endpoint, "--prefix", prefix, "register", "--ttl", "5s", "--zone", "z1", "mc-1", "127.0.0.1:11211"})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()

	deadline := time.Now().Add(realprog.Patience)
	for {
		snap, err := store.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// Listed, and the sidecar says so: etcd may list the node before
		// the sidecar has the answer to its put (a busy machine).
		if m, ok := snap.Member("mc-1"); ok && strings.Contains(out.String(), "registered mc-1") {
			if m.Lease == 0 || m.Zone != "z1" || m.Addr != "127.0.0.1:11211" {
				t.Fatalf("registered %+v, want a lease, zone z1, address 127.0.0.1:11211", m)
			}
			break
		}
		select {
		case err := <-done:
			t.Fatalf("register ended: %v; stderr %s", err, errs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("mc-1 not registered within %v", realprog.Patience)
		}
		time.Sleep(20 * time.Millisecond) // polling etcd, with a deadline
	}
	stop() // as SIGTERM would
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("register: %v", err)
		}
	case <-time.After(realprog.Patience):
		t.Fatal("register did not stop")
	}
	if snap, _ := store.List(context.Background()); len(snap.Members) != 0 {
		t.Errorf("after the sidecar stopped: %+v, want mc-1 gone at once", snap.Members)
	}
	if !strings.Contains(out.String(), "registered mc-1") || !strings.Contains(out.String(), "deregistered mc-1") {
		t.Errorf("output %q", out.String())
	}
}
