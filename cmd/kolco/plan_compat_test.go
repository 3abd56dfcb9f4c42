package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/compat"
)

// planKeys writes n keys of assorted shapes to a key file and returns its
// path and the keys.
func planKeys(t *testing.T, n int) (string, []string) {
	t.Helper()
	var ks []string
	for i := range n {
		ks = append(ks, fmt.Sprintf("user:%d:{t%d}", i*7919, i%13))
	}
	path := filepath.Join(t.TempDir(), "keys.txt")
	if err := os.WriteFile(path, []byte(strings.Join(ks, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, ks
}

// locateOwners runs kolco locate over keys with args and returns each
// key's owner.
func locateOwners(t *testing.T, keys []string, args ...string) map[string]string {
	t.Helper()
	code, out, errs := runCLI(t, strings.Join(keys, "\n")+"\n", append([]string{"locate"}, args...)...)
	if code != 0 {
		t.Fatalf("locate %v: exit %d: %s", args, code, errs)
	}
	owners := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		k, o, _ := strings.Cut(line, "\t")
		owners[k] = o
	}
	return owners
}

// readMoves returns the lines of a --moves file, sorted.
func readMoves(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		lines = nil
	}
	sort.Strings(lines)
	return lines
}

// addrs maps the node IDs of system's placement for in to their
// addresses: kolco plan names the servers of a system that keeps keys by
// address so, where kolco locate prints the system's own names.
func addrs(t *testing.T, system string, in compat.Input) map[string]string {
	t.Helper()
	p, err := compat.Build(system, in)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, n := range p.Nodes() {
		m[n.ID] = n.Addr
	}
	return m
}

// TestPlanCompatMovesAreLocateDifferences: for real configurations of
// nginx (a whole nginx.conf, one upstream chosen, a server added and a
// weight changed), HAProxy (a whole haproxy.cfg with defaults, one backend
// chosen, a server removed and one renamed), libmemcached (a weighted
// ketama server list, a server added) and twemproxy (a server list,
// re-weighted), kolco plan --moves lists exactly the keys whose server
// differs between kolco locate on the description before and on the one
// after - the placements the compat tests hold to the real programs -
// each from its server before to its server after.
func TestPlanCompatMovesAreLocateDifferences(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ngxOld, ngxNew := write("nginx.conf", wholeNginx), write("nginx.new.conf", strings.Replace(wholeNginx,
		"server 127.0.0.1:19002; }", "server 127.0.0.1:19002 weight=3; server 127.0.0.1:19005; }", 1))
	haOld, haNew := write("haproxy.cfg", wholeHAProxy), write("haproxy.new.cfg", strings.Replace(strings.Replace(wholeHAProxy,
		"    server s1 10.0.0.1:80\n", "", 1), "server s2 10.0.0.2:80 weight 3", "server renamed 10.0.0.2:80 weight 3\n    server s3 10.0.0.3:80", 1))
	keyFile, keys := planKeys(t, 3000)
	for _, c := range []struct {
		system       string
		common       []string // flags for both descriptions
		before, desc string   // the flag describing the servers before, and its value
		after        string
	}{
		{"nginx", []string{"--upstream", "cache"}, "--config", ngxOld, ngxNew},
		{"haproxy", []string{"--backend", "web"}, "--config", haOld, haNew},
		{"libmemcached", []string{"--distribution", "ketama_weighted"}, "--servers", "10.0.0.1:11211:2,10.0.0.2:11211,10.0.0.3:11211", "10.0.0.1:11211:2,10.0.0.2:11211,10.0.0.3:11211,10.0.0.4:11211"},
		{"twemproxy", []string{"--hash", "murmur"}, "--servers", "10.0.0.1:11211:1 a,10.0.0.2:11211:1 b,10.0.0.3:11211:1 c", "10.0.0.1:11211:1 a,10.0.0.2:11211:3 b,10.0.0.3:11211:1 c"},
	} {
		t.Run(c.system, func(t *testing.T) {
			algo := []string{"--algo", c.system}
			before := locateOwners(t, keys, append(append(algo, c.common...), c.before, c.desc)...)
			after := locateOwners(t, keys, append(append(algo, c.common...), c.before, c.after)...)
			moves := filepath.Join(t.TempDir(), "moves.tsv")
			args := append(append(append([]string{"plan"}, algo...), c.common...), c.before, c.desc, "--to", c.after, "--keys-file", keyFile, "--moves", moves)
			if code, _, errs := runCLI(t, "", args...); code != 0 {
				t.Fatalf("plan: exit %d: %s", code, errs)
			}
			addrOf := func(desc string) map[string]string {
				in := compat.Input{Servers: desc, Distribution: map[string]string{"libmemcached": "ketama_weighted"}[c.system],
					Hash: map[string]string{"twemproxy": "murmur"}[c.system]}
				if c.before == "--config" {
					data, _ := os.ReadFile(desc)
					in = compat.Input{Config: data, Select: c.common[1]}
				}
				return addrs(t, c.system, in)
			}
			old, cur := addrOf(c.desc), addrOf(c.after)
			var want []string
			for _, k := range keys {
				if from, to := old[before[k]], cur[after[k]]; from != to {
					want = append(want, k+"\t"+from+"\t"+to)
				}
			}
			sort.Strings(want)
			got := readMoves(t, moves)
			if len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("plan lists %d moves, locate differs on %d keys", len(got), len(want))
			}
		})
	}
}
