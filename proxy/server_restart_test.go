package proxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/algo"
)

// configFile is a configuration file in a directory of its own, and the
// server lines it can hold.
type configFile struct {
	t      *testing.T
	path   string
	extra  string   // pool settings
	global string   // the kolco block, if any
	lines  []string // every server line, by index
}

// write writes the file with the servers at the indexes given.
func (c *configFile) write(servers ...int) {
	c.t.Helper()
	var lines []string
	for _, i := range servers {
		lines = append(lines, c.lines[i])
	}
	if err := os.WriteFile(c.path, []byte(placementYAML(c.extra, lines)+c.global), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

// start starts a proxy on the file, as kolco proxy does; Cleanup shuts it
// down. The error is Start's.
func (c *configFile) start() (*Server, error) {
	cfg, err := LoadConfig(c.path)
	if err != nil {
		return nil, err
	}
	s := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := s.Start(); err != nil {
		return nil, err
	}
	c.t.Cleanup(func() { shutdown(s) })
	return s, nil
}

func shutdown(s *Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = s.Shutdown(ctx)
}

// history is the changes TestRestartPlacesAlike applies by reload, as the
// indexes of the servers after each: m1 removed, m6 added, m3 removed, m1
// added back.
var history = [][]int{{0, 2, 3, 4, 5}, {0, 2, 3, 4, 5, 6}, {0, 2, 4, 5, 6}, {0, 1, 2, 4, 5, 6}}

// TestRestartPlacesAlike: a proxy whose history-dependent pool went
// through reloads that removed and added servers is restarted on the same
// file; before and after, every key is written to the same server,
// checked on the servers themselves, and a change applied after the
// restart places keys as on a proxy that lived through the whole history.
// A proxy started on the same configuration without the state file places
// keys otherwise (the test would not test the state if it did not).
func TestRestartPlacesAlike(t *testing.T) {
	t.Parallel()
	for _, a := range algo.All() {
		if !a.HistoryDependent {
			continue
		}
		t.Run(a.Name, func(t *testing.T) {
			t.Parallel()
			var ms []*memcached
			var lines []string
			for i := range 7 {
				ms = append(ms, startMemcached(t, 0))
				lines = append(lines, fmt.Sprintf("%s:1 m%d", ms[i].addr, i))
			}
			extra := "  distribution: " + a.Name + "\n"
			f := &configFile{t: t, path: filepath.Join(t.TempDir(), "nutcracker.yml"), extra: extra, lines: lines}
			g := &configFile{t: t, path: filepath.Join(t.TempDir(), "nutcracker.yml"), extra: extra, lines: lines}
			f.write(0, 1, 2, 3, 4, 5)
			g.write(0, 1, 2, 3, 4, 5)
			s, long := mustStart(f), mustStart(g)
			for _, servers := range history[:3] {
				f.write(servers...)
				g.write(servers...)
				reloadFile(t, s, f.path)
				reloadFile(t, long, g.path)
			}
			keys := testKeys(a.Name, 480)
			fl := &cutServers{t: t, ms: ms, s: s, addr: s.Addr("p").String()}
			value := func(k string) string { return k + "=before" }
			setAll(t, fl.addr, keys, value)
			before := fl.owners(keys, value)

			shutdown(s)
			flushAll(t, ms)
			s = mustStart(f)
			fl.s, fl.addr = s, s.Addr("p").String()
			value = func(k string) string { return k + "=after" }
			setAll(t, fl.addr, keys, value)
			for i, at := range fl.owners(keys, value) {
				if at != before[i] {
					t.Fatalf("after the restart %s is on m%d, before on m%d", keys[i], at, before[i])
				}
			}
			f.write(history[3]...)
			g.write(history[3]...)
			reloadFile(t, s, f.path)
			reloadFile(t, long, g.path)
			if !slices.Equal(routeNames(s.testPool("p"), keys), routeNames(long.testPool("p"), keys)) {
				t.Fatal("a change after the restart places keys otherwise than on the proxy that was not restarted")
			}
			freshPlacementDiffers(t, f, keys, routeNames(s.testPool("p"), keys))
		})
	}
}

// freshPlacementDiffers checks that a proxy started on f's servers without
// a state file places some key otherwise than want.
func freshPlacementDiffers(t *testing.T, f *configFile, keys []string, want []string) {
	data, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	fresh := &configFile{t: t, path: filepath.Join(t.TempDir(), "fresh.yml")}
	if err := os.WriteFile(fresh.path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(routeNames(mustStart(fresh).testPool("p"), keys), want) {
		t.Fatal("a placement built afresh places every key alike: the test would not test the state")
	}
}

func mustStart(c *configFile) *Server {
	c.t.Helper()
	s, err := c.start()
	if err != nil {
		c.t.Fatal(err)
	}
	return s
}

func reloadFile(t *testing.T, s *Server, path string) {
	t.Helper()
	if err := s.ReloadFile(context.Background(), path); err != nil {
		t.Fatal(err)
	}
}

// stateFileOf returns the state file's contents beside f.
func stateFileOf(t *testing.T, f *configFile) string {
	data, err := os.ReadFile(f.path + ".kolco-state")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"kolco_proxy_state": 1`) {
		t.Fatalf("state file:\n%s", data)
	}
	return string(data)
}
