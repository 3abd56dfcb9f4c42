package faults

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// Env is what a run needs of the test that drives it.
type Env struct {
	// Kolco returns a command running the kolco program with args: the
	// proxies, "kolco proxy --check", "kolco members".
	Kolco func(args ...string) *exec.Cmd
	// Reaper says that the test binary calls Reap first in its TestMain:
	// each proxy then runs under a reaper, which kills what the proxy's
	// handovers leave behind when the run ends (see Reap).
	Reaper bool
}

// Config says what to run.
type Config struct {
	// Seeds are the seeds to run, in order. With Until, the first is
	// where the run begins.
	Seeds []uint64
	// Until, when set, runs seed after seed until one fails or this time
	// has passed.
	Until time.Time
	// Length is each schedule's span of faults.
	Length time.Duration
	// Proxies is how many proxies serve the pool.
	Proxies int
	// Exclusions leave out combinations and faults.
	Exclusions []Exclusion
	// Replay is the command that replays a seed, with %d for the seed:
	// printed with every failure.
	Replay string
	// Report, when set, is a file the summary is written to.
	Report string
}

// seedStream tells a run's random numbers apart from others drawn from
// the same seed.
const seedStream = 0x6b6f6c636f

// run is one seed's run: its combination, schedule and processes.
type run struct {
	t     *testing.T
	env   Env
	cfg   Config
	seed  uint64
	combo Combo
	topo  topology
	sched Schedule
	sp    *spawner
	dir   string
	bins  binaries

	servers     []*Server
	sentinels   sentinels // a Sentinel pool's shards and Sentinels
	etcd        *etcdProc
	sidecars    sidecars
	proxies     []*proxyProc
	membersFile string
	keyFile     string

	memberMu sync.Mutex // serializes membership changes; guards members
	members  []string

	faultStart time.Time
	mu         sync.Mutex // guards what follows
	events     []string
	troubles   []string
	applied    map[string]int
}

func (r *run) cleanup(f func()) { r.t.Cleanup(f) }

// Run runs cfg's seeds, each a subtest "seed=N": a combination of options
// and a schedule of faults drawn from the seed, real servers, Sentinels,
// etcd and proxies started, clients' histories recorded through the
// faults and checked.
func Run(t *testing.T, env Env, cfg Config) *Summary {
	bins := binaries{
		memcached: realprog.Binary(t, "memcached", "memcached"),
		redis:     realprog.Binary(t, "redis-server", "redis-server"),
		sentinel:  realprog.Binary(t, "redis-sentinel", "redis-sentinel"),
		etcd:      realprog.Binary(t, "etcd-server", "etcd"),
	}
	sum := newSummary()
	for i := 0; cfg.Until.IsZero() && i < len(cfg.Seeds) || !cfg.Until.IsZero() && time.Now().Before(cfg.Until); i++ {
		seed := cfg.Seeds[min(i, len(cfg.Seeds)-1)] + uint64(max(0, i-len(cfg.Seeds)+1))
		ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runSeed(t, env, cfg, bins, seed, sum) })
		// After each seed, so that a long run ended early still
		// reports the seeds it ran.
		writeReport(t, cfg.Report, sum)
		if !ok && !cfg.Until.IsZero() {
			break
		}
	}
	t.Logf("fault schedules:\n%s", sum)
	return sum
}

// writeReport writes the summary to the file path, when one is named.
func writeReport(t *testing.T, path string, sum *Summary) {
	if path == "" {
		return
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(sum.String()), 0o644); err != nil {
		t.Error(err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Error(err)
	}
}

// runSeed runs one seed.
func runSeed(t *testing.T, env Env, cfg Config, bins binaries, seed uint64, sum *Summary) {
	rng := rand.New(rand.NewPCG(seed, seedStream))
	combo, ok := chooseCombo(t, env, cfg, rng, sum)
	if !ok {
		sum.skip()
		t.Skip("no combination of the matrix that is neither refused nor excluded in 40 draws")
	}
	topo := topologyOf(combo, cfg.Proxies)
	sched := drawSchedule(rng, combo, topo, cfg.Length, func(kind string) bool { return excludedKind(cfg.Exclusions, combo, kind) })
	t.Logf("seed %d: %s\nschedule:\n%s", seed, combo, sched)
	r := &run{t: t, env: env, cfg: cfg, seed: seed, combo: combo, topo: topo, sched: sched, bins: bins,
		dir: t.TempDir(), sidecars: sidecars{}, applied: map[string]int{}}
	r.sp = newSpawner()
	r.sp.logf = t.Logf
	t.Cleanup(r.sp.close) // the first cleanup registered runs last: after every kill
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d failed: %s\nschedule:\n%sapplied:\n%s\n%s%s\nreplay: %s", seed, combo, sched,
				strings.Join(r.events, "\n"), r.logs(), r.keepLogs(), fmt.Sprintf(cfg.Replay, seed))
		}
	})
	if err := r.startCluster(); err != nil {
		t.Fatalf("starting the servers: %v", err)
	}
	if err := r.startProxies(); err != nil {
		t.Fatalf("starting the proxies: %v", err)
	}
	res := r.load()
	sum.add(r, res)
	for _, tr := range r.troubles {
		t.Errorf("trouble: %s", tr)
	}
	r.mu.Lock()
	t.Logf("applied:\n%s", strings.Join(r.events, "\n"))
	r.mu.Unlock()
	if res.failed() {
		t.Errorf("%s", res)
	} else {
		t.Logf("%s", res)
	}
}

// chooseCombo draws combinations until one is neither excluded nor
// refused by "kolco proxy --check", saying why it skips each.
func chooseCombo(t *testing.T, env Env, cfg Config, rng *rand.Rand, sum *Summary) (Combo, bool) {
	for range 40 {
		c := drawCombo(rng)
		if e, ok := excludedCombo(cfg.Exclusions, c); ok {
			t.Logf("skipped %s: excluded by %s (%s)", c, e, e.Why)
			sum.refuse("excluded: " + e.String())
			continue
		}
		if why := refused(t, env, c); why != "" {
			t.Logf("skipped %s: refused: %s", c, why)
			sum.refuse(why)
			continue
		}
		return c, true
	}
	return Combo{}, false
}

// refused runs "kolco proxy --check" on a configuration of c and returns
// its error line, or "" when it accepts it.
func refused(t *testing.T, env Env, c Combo) string {
	dir := t.TempDir()
	in := configInput{combo: c, listen: "127.0.0.1:1", admin: "127.0.0.1:2", peers: []string{"127.0.0.1:2"},
		servers: [][2]string{{"127.0.0.1:3", "a"}, {"127.0.0.1:4", "b"}, {"127.0.0.1:5", "c"}},
		source: sourceInput{membersFile: dir + "/members.yml", etcd: "http://127.0.0.1:6", gossipBind: "127.0.0.1:7",
			keyFile: dir + "/gossip.keys", gossipSeeds: []string{"127.0.0.1:8"}, sentinels: []string{"127.0.0.1:9"}}}
	conf := dir + "/check.yml"
	if err := os.WriteFile(conf, []byte(poolConfig(in)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in.source.keyFile, []byte(gossipKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A file source's file, as the run writes it before its proxies
	// start: --check reads it as a start does.
	var members strings.Builder
	fmt.Fprintf(&members, "%s:\n  servers:\n", poolName)
	for _, s := range in.servers {
		fmt.Fprintf(&members, "   - %s:1 %s\n", s[0], s[1])
	}
	if err := os.WriteFile(in.source.membersFile, []byte(members.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	sp := newSpawner()
	defer sp.close()
	out, err := sp.run(env.Kolco("proxy", "--check", "--config", conf), 30*time.Second)
	if err == nil {
		return ""
	}
	if _, ok := err.(*exec.ExitError); !ok {
		t.Fatalf("kolco proxy --check: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	msg := lines[len(lines)-1]
	if i := strings.Index(msg, "pool \""); i >= 0 {
		msg = msg[i:] // past "kolco: FILE: proxy: bad config: line N: "
	}
	return msg
}

// excludedCombo returns the exclusion that leaves c out, if one does.
func excludedCombo(es []Exclusion, c Combo) (Exclusion, bool) {
	for _, e := range es {
		if !e.faultOnly() && e.matches(c.Atoms()) {
			return e, true
		}
	}
	return Exclusion{}, false
}

// excludedKind reports whether faults of kind are left out in c.
func excludedKind(es []Exclusion, c Combo, kind string) bool {
	words := append(c.Atoms(), kind)
	return slices.ContainsFunc(es, func(e Exclusion) bool { return e.faultOnly() && e.matches(words) })
}

// keepLogs copies each proxy's whole log, and what its process wrote, to
// the failure's kept directory (keepDir) and says where: the ends that
// logs prints rarely hold how a proxy came to fail, and the run's own
// directory is removed when the test ends.
func (r *run) keepLogs() string {
	dir := keepDir(r.seed)
	if dir == "" {
		return ""
	}
	var kept []string
	for _, p := range r.proxies {
		b, _ := os.ReadFile(p.logFile)
		b = append(b, p.proc.Output()...)
		path := filepath.Join(dir, p.Name+".log")
		if os.WriteFile(path, b, 0o644) == nil {
			kept = append(kept, path)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	return "the proxies' whole logs: " + strings.Join(kept, " ") + "\n"
}

// logs are the ends of the proxies' logs, and what the Sentinels said of
// their masters (failovers, a primary seen down, their tilt), for a
// failure's report.
func (r *run) logs() string {
	var b strings.Builder
	for _, p := range r.proxies {
		lines := strings.Split(strings.TrimSpace(p.logTail()), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		fmt.Fprintf(&b, "%s's log, its end:\n  %s\n", p.Name, strings.Join(lines, "\n  "))
	}
	for i, sp := range r.sentinels.procs {
		var events []string
		for line := range strings.Lines(sp.proc.Output()) {
			if strings.Contains(line, "master") || strings.Contains(line, "tilt") {
				events = append(events, strings.TrimSpace(line))
			}
		}
		if len(events) > 30 {
			events = events[len(events)-30:]
		}
		fmt.Fprintf(&b, "sentinel%d's word on its masters, its end:\n  %s\n", i, strings.Join(events, "\n  "))
	}
	return b.String()
}
