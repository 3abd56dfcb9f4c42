package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/etcd"
	"github.com/kolco-dev/kolco/membership/etcdtest"
)

// stateJSON runs "members state --json" and decodes it.
func stateJSON(t *testing.T, srv *etcdtest.Server) stateReport {
	t.Helper()
	code, out, errs := membersCLI(t, srv, "state", "--json")
	if code != 0 {
		t.Fatalf("state: exit %d: %s", code, errs)
	}
	var r stateReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("state --json: %v\n%s", err, out)
	}
	return r
}

// TestMembersState: "members state --init" makes the membership keep the
// placement state of a history-dependent algorithm, every change made with
// "kolco members" keeps it current, and the fingerprint printed is the one
// a follower of the membership reports.
func TestMembersState(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Config{})
	for _, id := range []string{"a", "b", "c", "d"} {
		if code, _, errs := membersCLI(t, srv, "add", id); code != 0 {
			t.Fatalf("add %s: exit %d: %s", id, code, errs)
		}
	}
	if r := stateJSON(t, srv); r.Algorithm != "" {
		t.Fatalf("a state before --init: %+v", r)
	}
	for _, step := range [][]string{{"state", "--init", "jump"}, {"remove", "b"}, {"drain", "d"}, {"add", "e"}} {
		if code, _, errs := membersCLI(t, srv, step...); code != 0 {
			t.Fatalf("%v: exit %d: %s", step, code, errs)
		}
		if r := stateJSON(t, srv); r.Algorithm != "jump" || !r.Current || r.Fingerprint == "" {
			t.Fatalf("after %v: %+v, want a current jump state", step, r)
		}
	}
	r := stateJSON(t, srv)
	if r.Nodes != 3 {
		t.Errorf("state over %d nodes, want 3 (a, c, e)", r.Nodes)
	}
	store, err := etcd.New(etcd.Config{Endpoints: []string{srv.Endpoint}, Prefix: "/kolco/" + t.Name() + "/"})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	f, err := membership.Follow(context.Background(), store, membership.FollowConfig{Algorithm: "jump"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if v, err := f.WaitRevision(ctx, r.Revision); err != nil || v.Fingerprint != r.Fingerprint {
		t.Errorf("a follower reports %s (%v), state printed %s", v.Fingerprint, err, r.Fingerprint)
	}

	for _, c := range []struct {
		name string
		args []string
	}{
		{"a weight jump has not", []string{"reweight", "a", "2"}},
		{"a second state", []string{"state", "--init", "anchor"}},
	} {
		if code, _, errs := membersCLI(t, srv, c.args...); code != 1 || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want 1 and one line", c.name, code, errs)
		}
	}
	if code, out, _ := membersCLI(t, srv, "state"); code != 0 || !strings.Contains(out, "jump state over 3 nodes") || !strings.Contains(out, "fingerprint "+r.Fingerprint) {
		t.Errorf("state (exit %d):\n%s", code, out)
	}
	if code, _, errs := membersCLI(t, srv, "state", "--clear"); code != 0 {
		t.Fatalf("clear: exit %d: %s", code, errs)
	}
	if r := stateJSON(t, srv); r.Algorithm != "" {
		t.Errorf("after --clear: %+v", r)
	}
	if code, _, _ := membersCLI(t, srv, "state", "--clear"); code != 1 {
		t.Errorf("clearing no state: exit %d, want 1", code)
	}
}

func TestMembersStateUsageErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"history-independent", []string{"state", "--init", "ring"}},
		{"unknown algorithm", []string{"state", "--init", "nope"}},
		{"init and clear", []string{"state", "--init", "jump", "--clear"}},
		{"capacity without anchor", []string{"state", "--init", "jump", "--capacity", "8"}},
		{"slots without slots", []string{"state", "--init", "anchor", "--slots", "8"}},
		{"hash with init", []string{"state", "--init", "jump", "--hash", "xxh3"}},
		{"unknown hash", []string{"state", "--hash", "sha1"}},
		{"an argument", []string{"state", "jump"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runCLI(t, "", append([]string{"members", "--prefix", "/p/"}, c.args...)...)
			if code != 2 || strings.Count(errs, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want 2 and one line", code, errs)
			}
		})
	}
}

// TestMembersReweight: reweighting a node to the weight it has writes
// nothing and says so; under a stored placement of an algorithm without
// weights the refusal says why once, without ErrBadWeight's text about
// positive numbers that a weight of 2 contradicts.
func TestMembersReweight(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Config{})
	t.Run("same weight", func(t *testing.T) {
		for _, step := range [][]string{{"add", "a", "--weight", "2"}, {"add", "b"}} {
			if code, _, errs := membersCLI(t, srv, step...); code != 0 {
				t.Fatalf("%v: exit %d: %s", step, code, errs)
			}
		}
		before := listJSON(t, srv).Revision
		for _, step := range [][]string{{"reweight", "a", "2"}, {"reweight", "b", "1"}} {
			code, out, errs := membersCLI(t, srv, step...)
			if code != 0 || errs != "" || !strings.Contains(out, "nothing written") {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 0 and nothing written", step, code, out, errs)
			}
		}
		if after := listJSON(t, srv).Revision; after != before {
			t.Errorf("reweighting to the same weight moved the store from revision %d to %d", before, after)
		}
	})
	t.Run("unweighted", func(t *testing.T) {
		for _, step := range [][]string{{"add", "a"}, {"add", "b"}, {"state", "--init", "jumpback"}} {
			if code, _, errs := membersCLI(t, srv, step...); code != 0 {
				t.Fatalf("%v: exit %d: %s", step, code, errs)
			}
		}
		code, _, errs := membersCLI(t, srv, "reweight", "a", "2")
		if code != 1 || strings.Count(errs, "\n") != 1 {
			t.Fatalf("exit %d, stderr %q; want 1 and one line", code, errs)
		}
		if !strings.Contains(errs, "takes no weights") || strings.Count(errs, "jumpback") != 1 || strings.Contains(errs, "positive finite") {
			t.Errorf("stderr %q: want jumpback named once, saying it takes no weights", errs)
		}
	})
}

// TestMembersScaleOutUndone: under a stored jump state, a node added with
// "members add" and removed again with "members remove" leaves the state
// and the fingerprint as they were, so that followers place every key as
// before the scale-out.
func TestMembersScaleOutUndone(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Config{})
	for _, step := range [][]string{{"add", "a"}, {"add", "b"}, {"add", "c"}, {"state", "--init", "jump"}} {
		if code, _, errs := membersCLI(t, srv, step...); code != 0 {
			t.Fatalf("%v: exit %d: %s", step, code, errs)
		}
	}
	before := stateJSON(t, srv)
	if code, _, errs := membersCLI(t, srv, "add", "d"); code != 0 {
		t.Fatalf("add d: exit %d: %s", code, errs)
	}
	if grown := stateJSON(t, srv); grown.Fingerprint == before.Fingerprint {
		t.Fatalf("adding d left the fingerprint %s: the test would not test an undo", grown.Fingerprint)
	}
	if code, _, errs := membersCLI(t, srv, "remove", "d"); code != 0 {
		t.Fatalf("remove d: exit %d: %s", code, errs)
	}
	after := stateJSON(t, srv)
	if after.Fingerprint != before.Fingerprint || after.Bytes != before.Bytes || after.Nodes != before.Nodes {
		t.Errorf("after add d, remove d: %+v; before: %+v", after, before)
	}
}
