package faults

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// faultKinds are the kinds of fault a schedule applies, by the names an
// exclusion uses.
var faultKinds = []string{
	"stop",     // SIGSTOP, SIGCONT after For
	"kill",     // kill -9, started again after For (empty or with its data)
	"reload",   // SIGHUP to a proxy
	"handover", // SIGUSR2 to a proxy
	"member",   // a server added to or removed from the pool, through its source
	"slow",     // the link to a server delays each chunk by Delay, for For
	"stall",    // the link to a server holds every byte, for For
	"cut",      // the link to a server resets its connections, for For
	"starve",   // busy processes pinned to the proxy's core, for For
}

// Fault is one step of a schedule.
type Fault struct {
	At, For time.Duration
	Kind    string
	// Target is what it is applied to: a server (m1, r2), a Sentinel
	// shard's primary or replica (s0/primary), a Sentinel (sentinel1),
	// etcd, a proxy (proxy0), or for a membership change the pool.
	Target string
	Empty  bool          // kill: start again without its data
	Delay  time.Duration // slow: each chunk's delay
	Busy   int           // starve: busy processes beside the proxy
	// Change is a membership change: "add NAME" or "remove NAME".
	Change string
}

func (f Fault) String() string {
	at := fmt.Sprintf("+%6.2fs  ", f.At.Seconds())
	switch f.Kind {
	case "stop":
		return at + fmt.Sprintf("stop %s for %.2fs", f.Target, f.For.Seconds())
	case "kill":
		how := "with its data"
		if f.Empty {
			how = "empty"
		}
		return at + fmt.Sprintf("kill -9 %s, start it again %s after %.2fs", f.Target, how, f.For.Seconds())
	case "reload":
		return at + "reload (SIGHUP) " + f.Target
	case "handover":
		return at + "hand over (SIGUSR2) " + f.Target
	case "member":
		return at + "membership: " + or(f.Change, "a change")
	case "slow":
		return at + fmt.Sprintf("slow link to %s, %v a chunk, for %.2fs", f.Target, f.Delay, f.For.Seconds())
	case "stall":
		return at + fmt.Sprintf("stall link to %s for %.2fs", f.Target, f.For.Seconds())
	case "cut":
		return at + fmt.Sprintf("cut link to %s for %.2fs", f.Target, f.For.Seconds())
	case "starve":
		return at + fmt.Sprintf("starve %s: %d busy processes on its core for %.2fs", f.Target, f.Busy, f.For.Seconds())
	}
	return at + f.Kind + " " + f.Target
}

// end is when the fault is over.
func (f Fault) end() time.Duration { return f.At + f.For }

// Schedule is a run's faults, by time.
type Schedule struct {
	Length time.Duration
	Faults []Fault
	// Left counts the faults drawn and left out, by the limit that left
	// them out.
	Left map[string]int
}

func (s Schedule) String() string {
	var b strings.Builder
	for _, f := range s.Faults {
		b.WriteString("  " + f.String() + "\n")
	}
	for _, why := range slices.Sorted(maps.Keys(s.Left)) {
		fmt.Fprintf(&b, "  (left out %d drawn: %s)\n", s.Left[why], why)
	}
	return b.String()
}

// topology is what a run's faults can be applied to.
type topology struct {
	servers   []string // the servers behind relays, the spare last
	shards    []string // Sentinel shards, the spare last
	initial   []string // the pool's servers (or shards) at the start
	sentinels int
	etcd      bool
	proxies   int
}

// candidates returns the targets of kind in t.
func (t topology) candidates(kind string) []string {
	var out []string
	proxies := func() {
		for i := range t.proxies {
			out = append(out, fmt.Sprintf("proxy%d", i))
		}
	}
	switch kind {
	case "stop", "kill":
		out = append(out, t.servers...)
		for _, s := range t.shards {
			out = append(out, s+"/primary", s+"/replica")
		}
		for i := range t.sentinels {
			out = append(out, fmt.Sprintf("sentinel%d", i))
		}
		if t.etcd {
			out = append(out, "etcd")
		}
		proxies()
	case "reload", "handover", "starve":
		proxies()
	case "slow", "stall", "cut":
		out = append(out, t.servers...)
	case "member":
		out = append(out, "pool")
	}
	return out
}

// limits are what a schedule leaves out because the proxy documents it as
// outside its promise, each with where it says so.
const (
	limitEmptyStore = "a store's server started again empty: its data exists nowhere else (docs/stores.md)"
	limitForgets    = "a proxy restarted or handed over near another fault: one restarted while a server is down forgets what that server missed (docs/failures.md)"
	limitColdTwice  = "a Redis cache's second change: changes are cold, and a key moved back to a server it left reads what it held (docs/changes.md)"
)

// planner draws a schedule.
type planner struct {
	rng      *rand.Rand
	combo    Combo
	topo     topology
	excluded func(kind string) bool
	sched    Schedule
	members  []string
	changes  int
}

// drawSchedule draws faults over length from rng for combo on topo,
// leaving out the kinds excluded says.
func drawSchedule(rng *rand.Rand, combo Combo, topo topology, length time.Duration, excluded func(kind string) bool) Schedule {
	p := &planner{rng: rng, combo: combo, topo: topo, excluded: excluded, sched: Schedule{Length: length, Left: map[string]int{}},
		members: slices.Clone(topo.initial)}
	var kinds []string
	for _, k := range faultKinds {
		if len(topo.candidates(k)) > 0 && !excluded(k) {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return p.sched
	}
	// About one fault every 1.5 s, each lasting up to 4 s: two or three
	// at once are common.
	n := int(length/(1500*time.Millisecond)) + 1
	for tries := 0; len(p.sched.Faults) < n && tries < 50*n; tries++ {
		f := p.draw(pick(rng, kinds))
		if f.Kind == "" {
			continue
		}
		if f.At = time.Duration(rng.Int64N(int64(length))); f.end() > length {
			f.For = length - f.At
		}
		if why := p.conflict(f); why != "" {
			if why != "busy" {
				p.sched.Left[why]++
			}
			continue
		}
		p.sched.Faults = append(p.sched.Faults, f)
	}
	slices.SortStableFunc(p.sched.Faults, func(a, b Fault) int { return cmp.Compare(a.At, b.At) })
	p.planChanges()
	return p.sched
}

// between returns a duration in [lo, hi) milliseconds.
func (p *planner) between(lo, hi int) time.Duration {
	return time.Duration(lo+p.rng.IntN(hi-lo)) * time.Millisecond
}

// draw returns a fault of kind, without its time.
func (p *planner) draw(kind string) Fault {
	f := Fault{Kind: kind, Target: pick(p.rng, p.topo.candidates(kind))}
	switch kind {
	case "stop":
		f.For = p.between(300, 4000)
		if strings.HasPrefix(f.Target, "sentinel") {
			f.For = max(f.For, sentinelPause)
		}
	case "kill":
		f.For = p.between(200, 3000)
		f.Empty = p.server(f.Target) && p.rng.IntN(2) == 0
		if !p.combo.Redis && p.server(f.Target) {
			f.Empty = true // memcached keeps nothing across a kill
		}
		if f.Empty && p.combo.Store {
			p.sched.Left[limitEmptyStore]++
			return Fault{}
		}
	case "slow":
		f.For, f.Delay = p.between(1000, 4000), p.between(20, 400)
	case "stall", "cut":
		f.For = p.between(300, 3000)
	case "starve":
		f.For, f.Busy = p.between(2000, 6000), 2+p.rng.IntN(6)
	case "member":
		if p.combo.Redis && !p.combo.Store && p.changes > 0 {
			p.sched.Left[limitColdTwice]++
			return Fault{}
		}
		p.changes++
	}
	return f
}

// sentinelPause is the least time a Sentinel is stopped. One continued
// after more than its down-after-milliseconds (sentinelDown) but less
// than its tilt trigger (2 s between two runs of its timer) has not heard
// its primaries for longer than down-after, holds its peers' word from
// before the stop, and fails a healthy primary over at once - while the
// proxies, told only when the failover ends, write to the old primary,
// whose acknowledged writes Redis then drops as it demotes it: Redis's
// own window of loss, not the proxy's (seed 69: stopped 1.2 s, a Sentinel
// failed s0 over on continuing, and 16 reads found values older than
// writes the old primary had acknowledged). Stopped longer, it enters
// TILT as it continues and acts on nothing until its view is current
// (with sentinelDown past the tilt trigger, a shorter stop stays short of
// down-after as well).
const sentinelPause = 2500 * time.Millisecond

// server reports whether target is a data server (not a Sentinel, etcd or
// a proxy).
func (p *planner) server(target string) bool {
	return slices.Contains(p.topo.servers, target) || strings.Contains(target, "/")
}

// conflict says why f cannot join the schedule: "busy" when its target
// has a fault then, else the limit it would break; "" when it can.
func (p *planner) conflict(f Fault) string {
	const margin = 500 * time.Millisecond
	isolate := (p.combo.Ejection == "rehash" || p.combo.Copies > 1) && !p.combo.Store
	for _, g := range p.sched.Faults {
		overlap := f.At < g.end()+margin && g.At < f.end()+margin
		if !overlap && !isolate {
			continue
		}
		switch {
		case overlap && group(f.Target) == group(g.Target):
			// One fault at a time on a process; and on a shard's
			// two nodes, since a shard with both down at once loses
			// what only its primary held, by Redis's design.
			return "busy"
		case overlap && (f.Kind == "member" || g.Kind == "member") && (f.Target == "etcd" || g.Target == "etcd"):
			return "busy" // a change through etcd needs etcd
		case isolate && (p.forgets(f) || p.forgets(g)):
			// The proxy's journal of what a down server missed: a
			// fault near the restart could leave one down across it.
			settle := 4 * time.Second
			if f.At < g.end()+settle && g.At < f.end()+settle {
				return limitForgets
			}
		}
	}
	return ""
}

// group is the target a fault shares with others: a Sentinel shard's
// nodes are one.
func group(target string) string {
	g, _, _ := strings.Cut(target, "/")
	return g
}

// forgets reports whether f restarts a proxy's process.
func (p *planner) forgets(f Fault) bool {
	return f.Kind == "handover" || f.Kind == "kill" && strings.HasPrefix(f.Target, "proxy")
}

// planChanges gives the membership changes, in time order, what they
// change: the spare or a server out of the pool comes in, or a member
// goes out, keeping three to five.
func (p *planner) planChanges() {
	pool := p.topo.servers
	if len(p.topo.shards) > 0 {
		pool = p.topo.shards
	}
	lo, hi := max(len(p.topo.initial)-1, 2), len(pool)
	for i := range p.sched.Faults {
		f := &p.sched.Faults[i]
		if f.Kind != "member" {
			continue
		}
		var out []string
		for _, s := range pool {
			if !slices.Contains(p.members, s) {
				out = append(out, s)
			}
		}
		add := len(out) > 0 && (len(p.members) <= lo || p.rng.IntN(2) == 0)
		if len(p.members) >= hi {
			add = false
		}
		if add {
			s := pick(p.rng, out)
			p.members = append(p.members, s)
			f.Change = "add " + s
		} else {
			s := pick(p.rng, p.members)
			p.members = slices.DeleteFunc(p.members, func(m string) bool { return m == s })
			f.Change = "remove " + s
		}
	}
}
