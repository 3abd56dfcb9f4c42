package faults

import (
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSeedReplays: a seed draws the same combination and schedule every
// time, so that a failing seed's run can be replayed.
func TestSeedReplays(t *testing.T) {
	draw := func(seed uint64) string {
		rng := rand.New(rand.NewPCG(seed, seedStream))
		c := drawCombo(rng)
		return c.String() + "\n" + drawSchedule(rng, c, topologyOf(c, 3), 30*time.Second, func(string) bool { return false }).String()
	}
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		a, b := draw(seed), draw(seed)
		if a != b {
			t.Fatalf("seed %d drew\n%s\nthen\n%s", seed, a, b)
		}
		seen[a] = true
	}
	if len(seen) < 20 {
		t.Errorf("20 seeds drew %d distinct runs", len(seen))
	}
}

// TestScheduleCoversKinds: over a few seeds every kind of fault is drawn,
// and each fault's target exists in its run.
func TestScheduleCoversKinds(t *testing.T) {
	kinds := map[string]bool{}
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, seedStream))
		c := drawCombo(rng)
		topo := topologyOf(c, 3)
		for _, f := range drawSchedule(rng, c, topo, 30*time.Second, func(string) bool { return false }).Faults {
			kinds[f.Kind] = true
			if f.Kind != "member" && !slices.Contains(topo.candidates(f.Kind), f.Target) {
				t.Errorf("seed %d: %s: no such target in %+v", seed, f, topo)
			}
			if f.end() > 30*time.Second {
				t.Errorf("seed %d: %s ends past the schedule", seed, f)
			}
		}
	}
	for _, k := range faultKinds {
		if !kinds[k] {
			t.Errorf("no %s fault in 40 seeds", k)
		}
	}
}

// TestScheduleKeepsLimits: a store's servers are never started again
// empty, a Redis cache is changed once at most, and under rehash no proxy
// restarts near another fault.
func TestScheduleKeepsLimits(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, seedStream))
		for _, c := range []Combo{
			{Redis: true, Store: true, Ejection: "fail-fast", Source: "static", Copies: 1, Algorithm: "ring"},
			{Redis: true, Ejection: "none", Source: "file", Copies: 1, Algorithm: "ring"},
			{Ejection: "rehash", Source: "static", Copies: 1, Algorithm: "ketama"},
		} {
			s := drawSchedule(rng, c, topologyOf(c, 3), 30*time.Second, func(string) bool { return false })
			changes := 0
			for _, f := range s.Faults {
				if f.Kind == "kill" && f.Empty && c.Store {
					t.Errorf("seed %d: a store's %s", seed, f)
				}
				if f.Kind == "member" {
					changes++
				}
				if c.Ejection == "rehash" && (f.Kind == "handover" || f.Kind == "kill" && strings.HasPrefix(f.Target, "proxy")) {
					for _, g := range s.Faults {
						if g != f && g.At < f.end()+4*time.Second && f.At < g.end()+4*time.Second {
							t.Errorf("seed %d: %s within 4 s of %s", seed, f, g)
						}
					}
				}
			}
			if c.Redis && !c.Store && changes > 1 {
				t.Errorf("seed %d: %d changes of a Redis cache", seed, changes)
			}
		}
	}
}

// TestExclusions: an exclusion of options leaves combinations out, one
// naming a fault kind leaves faults out, and an unknown word is an error.
func TestExclusions(t *testing.T) {
	es, err := ParseExclusions("sentinel+rehash, stall, memcached+stop", "test")
	if err != nil {
		t.Fatal(err)
	}
	sentinelRehash := Combo{Redis: true, Ejection: "rehash", Source: "sentinel", Copies: 1, Algorithm: "ring"}
	if _, ok := excludedCombo(es, sentinelRehash); !ok {
		t.Error("sentinel+rehash did not leave out a Sentinel pool under rehash")
	}
	mc := Combo{Ejection: "rehash", Source: "static", Copies: 1, Algorithm: "ring"}
	if _, ok := excludedCombo(es, mc); ok {
		t.Error("a memcached pool was left out")
	}
	for kind, want := range map[string]bool{"stall": true, "stop": true, "kill": false} {
		if got := excludedKind(es, mc, kind); got != want {
			t.Errorf("%s faults of memcached left out: %v, want %v", kind, got, want)
		}
	}
	if excludedKind(es, sentinelRehash, "stop") {
		t.Error("memcached+stop left out a Redis pool's stops")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	s := drawSchedule(rng, mc, topologyOf(mc, 2), 30*time.Second, func(k string) bool { return excludedKind(es, mc, k) })
	for _, f := range s.Faults {
		if f.Kind == "stall" || f.Kind == "stop" {
			t.Errorf("excluded fault drawn: %s", f)
		}
	}
	if _, err := ParseExclusions("sentinel+nosuch", "test"); err == nil {
		t.Error("an unknown word was accepted")
	}
}

// TestProcessesDieWithTheRun: closing a run's spawner ends the thread
// that started its processes, and the kernel kills them: what a test
// binary killed mid-run does to them too.
func TestProcessesDieWithTheRun(t *testing.T) {
	sp := newSpawner()
	p := newProc(sp, "sleep", func() *exec.Cmd { return exec.Command("sleep", "60") })
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	if err := p.Signal(syscall.SIGSTOP); err != nil { // a stopped process dies of SIGKILL too
		t.Fatal(err)
	}
	sp.close()
	select {
	case <-p.Exited():
	case <-time.After(time.Minute):
		t.Fatal("a process started by a closed spawner still runs after a minute")
	}
}

// TestKillEndsWithAnOrphanHoldingTheOutput: a process that leaves a child
// behind holding its output (as a proxy's handover does) is over once it
// has exited, not once the child has; and inGroup finds the child by the
// group it inherited.
func TestKillEndsWithAnOrphanHoldingTheOutput(t *testing.T) {
	sp := newSpawner()
	t.Cleanup(sp.close)
	p := newProc(sp, "sh", func() *exec.Cmd {
		cmd := exec.Command("sh", "-c", "sleep 60 & echo started; wait")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd
	})
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := p.Pid()
	deadline := time.Now().Add(time.Minute)
	for len(inGroup(pgid)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("group %d: %v, want the shell and its sleep", pgid, inGroup(pgid))
		}
		time.Sleep(10 * time.Millisecond) // polling for the shell's child, not ordering
	}
	t.Cleanup(func() {
		for _, pid := range inGroup(pgid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	done := make(chan struct{})
	go func() { p.Kill(); close(done) }()
	select {
	case <-done:
	case <-time.After(outputWait + 10*time.Second):
		t.Fatal("Kill waits on the output the shell's child still holds")
	}
	if len(inGroup(pgid)) != 1 {
		t.Errorf("group %d after the shell's kill: %v, want its sleep alone", pgid, inGroup(pgid))
	}
}
