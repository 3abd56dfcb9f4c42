package proxy

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	stillMissing = "the pool's placement began afresh without its history, and its servers still hold keys whose reads miss: " +
		"this ends once each is written again, expires or is deleted"
	noneMissing = "no key misses any more because the pool's placement began afresh without its history: each was written again, expired or was deleted"
)

// TestStateMissingLastsWhileKeysMiss: the warning that a pool started
// without its placement history lasts while it is true, not for one
// process: the restart that restores the fresh placement from the state
// file says it again, with how many keys still miss; once every such key
// is written again it ends, the state file forgets it, and the next
// restart says nothing. (It was lost at the first restart, while 1,761 of
// 3,000 keys still missed.)
func TestStateMissingLastsWhileKeysMiss(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := range 3 {
		lines = append(lines, fmt.Sprintf("%s:1 m%d", startMemcached(t, 0).addr, i))
	}
	f := &configFile{t: t, path: filepath.Join(t.TempDir(), "nutcracker.yml"), extra: "  distribution: jump\n", lines: lines,
		global: "kolco:\n  admin_listen: 127.0.0.1:0\n"}
	f.write(0, 1, 2)
	s, _ := f.startLogged()
	f.write(0, 2) // a history: m1 removed before the keys are written
	if err := s.ReloadFile(context.Background(), f.path); err != nil {
		t.Fatal(err)
	}
	const keys = 60
	write := func(s *Server, from, to int) {
		c, err := dialKV("memcached", s.Addr("p").String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.close()
		for i := from; i < to; i++ {
			if err := c.set(fmt.Sprintf("%d:key", i), "v"); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(s, 0, keys)
	shutdown(s)
	state := f.path + ".kolco-state"
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}

	s, _ = f.startLogged() // placed afresh: some keys miss
	first := waitMark(t, s, true)
	if first.Misses <= 0 || first.Misses >= keys {
		t.Fatalf("state_missing %+v: want some of %d keys missing", first, keys)
	}
	eventually(t, "the mark in the state file", func() bool { return stateHasMark(t, state) })
	shutdown(s)

	s, logs := f.startLogged() // restored from the state file, and still said
	eventually(t, "the warning again", func() bool { return len(logs.lines(t, stillMissing)) == 1 })
	if got := waitMark(t, s, true); got.Misses != first.Misses || !got.Since.Equal(first.Since) || got.Why != first.Why {
		t.Errorf("after a restart: %+v, want the first start's mark %+v", got, first)
	}
	checkMissingMetric(t, s, 1)
	write(s, 0, keys/2) // half the keys written again where the placement looks
	shutdown(s)

	s, logs = f.startLogged()
	eventually(t, "the warning again", func() bool { return len(logs.lines(t, stillMissing)) == 1 })
	if half := waitMark(t, s, true); half.Misses >= first.Misses {
		t.Errorf("with half the keys written again %d miss, first %d: want fewer", half.Misses, first.Misses)
	}
	write(s, 0, keys)
	shutdown(s)

	s, logs = f.startLogged() // nothing misses: the mark ends, and the file forgets it
	eventually(t, "the end of the warning", func() bool { return len(logs.lines(t, noneMissing)) == 1 })
	waitMark(t, s, false)
	checkMissingMetric(t, s, 0)
	eventually(t, "the mark gone from the state file", func() bool { return !stateHasMark(t, state) })
	shutdown(s)

	s, logs = f.startLogged()
	if len(logs.lines(t, stillMissing)) != 0 || waitMark(t, s, false) != nil {
		t.Error("a restart after the end said the history was missing")
	}
}

// waitMark waits until the pool's state_missing is set (want) or not, and
// returns it.
func waitMark(t *testing.T, s *Server, want bool) *StateMissing {
	t.Helper()
	var ps PoolStatus
	eventually(t, fmt.Sprintf("state_missing set: %v", want), func() bool {
		if code := adminGet(t, s, "/v1/pools/p", "", &ps); code != http.StatusOK {
			t.Fatalf("/v1/pools/p: %d", code)
		}
		return (ps.StateMissing != nil) == want && (!want || !ps.StateMissing.CheckedAt.IsZero())
	})
	return ps.StateMissing
}

// stateHasMark reports whether the state file keeps the pool's mark.
func stateHasMark(t *testing.T, path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := parseState(data)
	if err != nil {
		t.Fatal(err)
	}
	return st.afreshFor("p") != nil
}

// checkMissingMetric checks kolco_proxy_state_missing.
func checkMissingMetric(t *testing.T, s *Server, want int) {
	t.Helper()
	line := fmt.Sprintf("kolco_proxy_state_missing{pool=\"p\"} %d\n", want)
	if metrics := adminBody(t, s, "/metrics"); !strings.Contains(metrics, line) {
		t.Errorf("the metrics lack %q", line)
	}
}
