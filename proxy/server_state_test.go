package proxy

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStatePath: where the state file is, by default and as state_file
// names it.
func TestStatePath(t *testing.T) {
	for _, tc := range []struct{ path, stateFile, want string }{
		{"/etc/nutcracker/nutcracker.yml", "", "/etc/nutcracker/nutcracker.yml.kolco-state"},
		{"/etc/nutcracker/nutcracker.yml", "placement.json", "/etc/nutcracker/placement.json"},
		{"/etc/nutcracker/nutcracker.yml", "/var/lib/kolco/state", "/var/lib/kolco/state"},
		{"conf/n.yml", "", "conf/n.yml.kolco-state"},
		{"", "/var/lib/kolco/state", "/var/lib/kolco/state"},
		{"", "state", "state"},
		{"", "", ""},
	} {
		t.Run(tc.path+"+"+tc.stateFile, func(t *testing.T) {
			c := &Config{Path: tc.path, Global: GlobalConfig{StateFile: tc.stateFile}}
			if got := c.statePath(); got != tc.want {
				t.Errorf("state file %q, want %q", got, tc.want)
			}
		})
	}
}

// statePool is a history-dependent pool over fake servers, in a
// configuration file of its own.
func statePool(t *testing.T, dist string) *configFile {
	return &configFile{t: t, path: filepath.Join(t.TempDir(), "nutcracker.yml"), extra: "  distribution: " + dist + "\n",
		lines: fakeServers(20300, "m0", "m1", "m2", "m3", "m4")}
}

// TestStateFileWritten: a start writes the state file, with the
// placement's fingerprint; a reload that changes nothing about placement
// leaves it as it is; one that removes a server rewrites it.
func TestStateFileWritten(t *testing.T) {
	f := statePool(t, "jump")
	f.write(0, 1, 2, 3, 4)
	s := mustStart(f)
	first := stateFileOf(t, f)
	if fp := s.testPool("p").place.Load().layout().fingerprint; !strings.Contains(first, fp) {
		t.Fatalf("the state file lacks the fingerprint %s:\n%s", fp, first)
	}
	info, err := os.Stat(f.path + ".kolco-state")
	if err != nil {
		t.Fatal(err)
	}
	f.extra += "  max_keys: 100\n"
	f.write(0, 1, 2, 3, 4)
	reloadFile(t, s, f.path)
	if again, err := os.Stat(f.path + ".kolco-state"); err != nil || !os.SameFile(info, again) {
		t.Fatalf("a reload that changes nothing about placement rewrote the state file (%v)", err)
	}
	f.write(0, 2, 3, 4)
	reloadFile(t, s, f.path)
	if second := stateFileOf(t, f); second == first || strings.Contains(second, `"m1"`) {
		t.Fatalf("after m1 was removed the state file says:\n%s", second)
	}
	entries, _ := os.ReadDir(filepath.Dir(f.path))
	if len(entries) != 2 {
		t.Errorf("the directory holds %d files, want the configuration and the state file", len(entries))
	}
}

// TestStateFileNotWrittenWithoutHistory: pools whose placement follows
// from their servers alone need no state file, and get none.
func TestStateFileNotWrittenWithoutHistory(t *testing.T) {
	for _, dist := range []string{"ring", "ketama"} {
		f := statePool(t, dist)
		f.write(0, 1, 2)
		mustStart(f)
		if _, err := os.Stat(f.path + ".kolco-state"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: state file: %v", dist, err)
		}
	}
}

// TestStateFileRefused: a start whose state file records a state that
// does not restore - one of servers its state does not hold, a weight its
// fingerprint does not cover, a fingerprint or state edited - or that is
// not a state file, is refused with an error that names kolco.state_file;
// nothing listens. (A record over other servers than the configuration's,
// whole, is served and the configuration applied to it: see
// TestStoreStartsOnAnEditedConfiguration.)
func TestStateFileRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*stateFile)
		data string
	}{
		{name: "servers not in its state", edit: func(st *stateFile) { st.Pools["p"].Nodes = st.Pools["p"].Nodes[1:] }},
		{name: "weight not in its fingerprint", edit: func(st *stateFile) { st.Pools["p"].Nodes[0].Weight = 2 }},
		{name: "fingerprint", edit: func(st *stateFile) { st.Pools["p"].Fingerprint = strings.Repeat("0", 32) }},
		{name: "state", edit: func(st *stateFile) { st.Pools["p"].State = []byte("not a state") }},
		{name: "format", edit: func(st *stateFile) { st.Format = 2 }},
		{name: "not json", data: "kolco_proxy_state: 1\n"},
		{name: "unknown key", data: `{"kolco_proxy_state": 1, "pools": {}, "extra": 1}`},
		{name: "null pool", data: `{"kolco_proxy_state": 1, "pools": {"p": null}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := statePool(t, "anchor")
			f.write(0, 1, 2, 3, 4)
			shutdown(mustStart(f))
			data := []byte(tc.data)
			if tc.edit != nil {
				st, err := parseState([]byte(stateFileOf(t, f)))
				if err != nil {
					t.Fatal(err)
				}
				tc.edit(st)
				data, _ = json.Marshal(st)
			}
			if err := os.WriteFile(f.path+".kolco-state", data, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := f.start()
			var ce *ConfigError
			if !errors.Is(err, ErrBadStateFile) || !errors.As(err, &ce) || ce.Key != "kolco.state_file" {
				t.Fatalf("start with the state file edited: %v", err)
			}
		})
	}
}

// TestStateFileAcrossConfigChanges: across a restart, a named server given
// a new address keeps its keys, and a pool given another distribution is
// placed afresh, its record replaced.
func TestStateFileAcrossConfigChanges(t *testing.T) {
	f := statePool(t, "jump")
	f.write(0, 1, 2, 3, 4)
	s := mustStart(f)
	f.write(0, 2, 3, 4)
	reloadFile(t, s, f.path)
	keys := testKeys("across", 1000)
	was := routeNames(s.testPool("p"), keys)
	shutdown(s)

	f.lines[3] = "127.0.0.1:20399:1 m3"
	f.write(0, 2, 3, 4)
	s = mustStart(f)
	if got := routeNames(s.testPool("p"), keys); !slices.Equal(got, was) {
		t.Fatal("a new address of m3 across a restart moved keys")
	}
	shutdown(s)

	f.extra = "  distribution: anchor\n"
	f.write(0, 2, 3, 4)
	mustStart(f)
	if st := stateFileOf(t, f); !strings.Contains(st, `"distribution": "anchor"`) {
		t.Fatalf("the record was not replaced:\n%s", st)
	}
}

// TestStateFileUnwritable: a start that cannot write the state file of a
// history-dependent pool is refused, naming kolco.state_file.
func TestStateFileUnwritable(t *testing.T) {
	f := statePool(t, "slots")
	f.global = "kolco:\n  state_file: " + filepath.Join(t.TempDir(), "missing", "state") + "\n"
	f.write(0, 1)
	_, err := f.start()
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Key != "kolco.state_file" {
		t.Fatalf("start with a state file in a missing directory: %v", err)
	}
}

// FuzzStateFile: whatever a state file holds, reading it for a pool
// returns a layout or an error, never a panic.
func FuzzStateFile(f *testing.F) {
	f.Add([]byte(`{"kolco_proxy_state": 1, "pools": {}}`))
	f.Add([]byte(`{"kolco_proxy_state": 1, "pools": {"p": {"distribution": "jump", "key_hash": "xxh3", "fingerprint": "",` +
		` "nodes": [{"id": "m0", "weight": 1}, {"id": "m1", "weight": 1}], "state": "AQ=="}}}`))
	f.Add([]byte(`{"kolco_proxy_state": 1, "pools": {"p": {"distribution": "slots", "nodes": [{"id": "m0", "weight": 0}],` +
		` "state": null}}}`))
	f.Add([]byte(`{"kolco_proxy_state": 1, "pools": {"p": {"distribution": "anchor", "key_hash": "xxh3", "nodes": [], "state": "////"}}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(""))                             // empty: said so, with no line
	f.Add([]byte("{\"kolco_proxy_state\": 1,\n")) // cut short: its line
	f.Add([]byte(`{"kolco_proxy_state": 1, "pools": {"p": {"distribution": "jump", "nodes": [], "state": null,` +
		` "afresh": {"why": "no state file", "items": 3, "since": "2026-01-05T10:00:01Z", "misses": 2}}}}`))
	cfgs := map[string]*PoolConfig{}
	for _, d := range []string{"jump", "slots", "anchor"} {
		c, err := ParseConfig([]byte(placementYAML("  distribution: "+d+"\n", []string{"127.0.0.1:1:1 m0", "127.0.0.1:2:1 m1"})))
		if err != nil {
			f.Fatal(err)
		}
		cfgs[d] = c.Pools["p"]
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := parseState(data)
		if err != nil {
			if !errors.Is(err, ErrBadStateFile) {
				t.Fatalf("error not wrapping ErrBadStateFile: %v", err)
			}
			return
		}
		for _, c := range cfgs {
			if l, err := st.layoutFor("p", c, discardLog()); err == nil && l != nil && l.fingerprint != st.Pools["p"].Fingerprint {
				t.Fatalf("restored fingerprint %s, recorded %s", l.fingerprint, st.Pools["p"].Fingerprint)
			}
		}
	})
}

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
