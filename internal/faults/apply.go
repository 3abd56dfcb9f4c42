package faults

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// applySchedule applies every fault at its time from now, each ended after
// its For, and returns once all have ended.
//
// Faults on one target (a shard's two nodes are one) hold its lock from
// start to end, a start again included, so that one that comes while
// another is still being undone - a proxy's restart slower than planned,
// on a starved machine - waits for it rather than find no process.
// Membership changes apply in the schedule's order whatever the
// goroutines' wake-ups: each waits for the one before, and for what it
// goes through - etcd, or every proxy whose configuration it rewrites, so
// that a restart or handover comes before the rewrite or after its SIGHUP
// was sent (one that comes before the proxy has applied it starts from
// its state file's servers and applies the new ones as a change).
func (r *run) applySchedule() {
	r.faultStart = time.Now()
	locks := map[string]*sync.Mutex{"etcd": {}}
	for _, p := range r.proxies {
		locks[p.Name] = &sync.Mutex{}
	}
	for _, f := range r.sched.Faults {
		if locks[group(f.Target)] == nil {
			locks[group(f.Target)] = &sync.Mutex{}
		}
	}
	var wg sync.WaitGroup
	prev := make(chan struct{})
	close(prev)
	for _, f := range r.sched.Faults {
		turn, done := prev, make(chan struct{})
		if f.Kind == "member" {
			prev = done
		} else {
			close(done)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if f.Kind == "member" {
				defer close(done)
			}
			time.Sleep(time.Until(r.faultStart.Add(f.At))) // the schedule's clock
			if f.Kind == "member" {
				<-turn
			}
			held := r.locksFor(f, locks)
			for _, mu := range held {
				mu.Lock()
			}
			err := r.apply(f)
			for _, mu := range held {
				mu.Unlock()
			}
			if err != nil {
				r.trouble(fmt.Sprintf("%s: %v", f, err))
			}
			r.mu.Lock()
			r.applied[f.Kind]++
			r.mu.Unlock()
		}()
	}
	wg.Wait()
}

// locksFor returns the locks f holds while it is applied, in one order
// for every fault: the target's, and a membership change's path.
func (r *run) locksFor(f Fault, locks map[string]*sync.Mutex) []*sync.Mutex {
	names := []string{group(f.Target)}
	if f.Kind == "member" {
		switch r.combo.Source {
		case "etcd":
			names = append(names, "etcd")
		case "static", "sentinel":
			for _, p := range r.proxies {
				names = append(names, p.Name)
			}
		}
	}
	slices.Sort(names)
	var out []*sync.Mutex
	for _, n := range names {
		out = append(out, locks[n])
	}
	return out
}

// event notes what was done, when, for the report.
func (r *run) event(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("+%6.2fs  %s", time.Since(r.faultStart).Seconds(), fmt.Sprintf(format, args...)))
}

// trouble notes a fault that could not be applied or undone: a failure
// of the run, since it may be the proxy's (a proxy that does not start
// again, a handover that does not end).
func (r *run) trouble(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.troubles = append(r.troubles, s)
	r.events = append(r.events, fmt.Sprintf("+%6.2fs  TROUBLE: %s", time.Since(r.faultStart).Seconds(), s))
}

// apply applies f and, after its For, ends it.
func (r *run) apply(f Fault) error {
	switch f.Kind {
	case "stop":
		return r.stop(f)
	case "kill":
		return r.kill(f)
	case "reload":
		r.event("SIGHUP %s", f.Target)
		return r.proxy(f.Target).signal(syscall.SIGHUP)
	case "handover":
		r.event("SIGUSR2 %s", f.Target)
		err := r.proxy(f.Target).handover()
		r.event("%s handed over", f.Target)
		return err
	case "member":
		return r.change(f.Change)
	case "slow", "stall", "cut":
		return r.link(f)
	case "starve":
		return r.starve(r.proxy(f.Target), f.Busy, f.For)
	}
	return fmt.Errorf("unknown fault kind %q", f.Kind)
}

// proxy returns the proxy named proxyN.
func (r *run) proxy(name string) *proxyProc {
	i, _ := strconv.Atoi(strings.TrimPrefix(name, "proxy"))
	return r.proxies[i]
}

// server returns the data server named by target: a server, or a shard's
// primary or replica now.
func (r *run) server(target string) *Server {
	if shard, role, ok := strings.Cut(target, "/"); ok {
		for _, sh := range r.sentinels.shards {
			if sh.Name == shard {
				return r.sentinels.node(sh, role)
			}
		}
		return nil
	}
	for _, s := range r.servers {
		if s.Name == target {
			return s
		}
	}
	return nil
}

// signalTarget sends sig to a process that is not a data server.
func (r *run) signalTarget(target string, sig syscall.Signal) error {
	switch {
	case strings.HasPrefix(target, "proxy"):
		return r.proxy(target).signal(sig)
	case strings.HasPrefix(target, "sentinel"):
		i, _ := strconv.Atoi(strings.TrimPrefix(target, "sentinel"))
		return r.sentinels.procs[i].proc.Signal(sig)
	case target == "etcd":
		return r.etcd.proc.Signal(sig)
	}
	return fmt.Errorf("no process %s", target)
}

// stop stops the target for f.For.
func (r *run) stop(f Fault) error {
	if s := r.server(f.Target); s != nil {
		resume, err := r.quiesce(f.Target, s)
		if err != nil {
			return err
		}
		r.event("SIGSTOP %s (%s)", f.Target, s.Name)
		if err := s.Proc.Signal(syscall.SIGSTOP); err != nil {
			resume()
			return err
		}
		time.Sleep(f.For) // the fault's length
		r.event("SIGCONT %s (%s)", f.Target, s.Name)
		err = s.Proc.Signal(syscall.SIGCONT)
		if sh := r.sentinels.shardOf(f.Target); sh != nil && strings.HasSuffix(f.Target, "/primary") {
			if !r.sentinels.await(sh, s, time.Now(), r.event) {
				// Undecided, it could still be failed over with what it
				// took since: its writes stay refused for the run.
				r.event("%s refuses writes for the rest of the run", s.Name)
				return err
			}
		}
		resume()
		return err
	}
	r.event("SIGSTOP %s", f.Target)
	if err := r.signalTarget(f.Target, syscall.SIGSTOP); err != nil {
		return err
	}
	time.Sleep(f.For) // the fault's length
	r.event("SIGCONT %s", f.Target)
	return r.signalTarget(f.Target, syscall.SIGCONT)
}

// kill kills the target and starts it again after f.For.
func (r *run) kill(f Fault) error {
	if s := r.server(f.Target); s != nil {
		if _, err := r.quiesce(f.Target, s); err != nil {
			return err
		}
		r.event("kill -9 %s (%s)", f.Target, s.Name)
		s.Proc.Kill()
		time.Sleep(f.For) // the fault's length
		decided := true
		if sh := r.sentinels.shardOf(f.Target); sh != nil && strings.HasSuffix(f.Target, "/primary") {
			decided = r.sentinels.await(sh, s, time.Now(), r.event)
		}
		err := s.Restart(f.Empty)
		r.event("%s (%s) started again (empty: %v)", f.Target, s.Name, f.Empty)
		if err == nil && !decided {
			// Undecided, it could be failed over with what it takes:
			// its writes are refused for the run.
			if _, err = redisDo(s.Direct(), "CONFIG", "SET", "min-replicas-to-write", "100"); err != nil {
				err = fmt.Errorf("refusing writes on %s: %w", s.Name, err)
			}
			r.event("%s refuses writes for the rest of the run", s.Name)
		}
		return err
	}
	r.event("kill -9 %s", f.Target)
	var restart func() error
	switch {
	case strings.HasPrefix(f.Target, "proxy"):
		p := r.proxy(f.Target)
		p.kill()
		restart = p.start
	case strings.HasPrefix(f.Target, "sentinel"):
		i, _ := strconv.Atoi(strings.TrimPrefix(f.Target, "sentinel"))
		r.sentinels.procs[i].proc.Kill()
		restart = r.sentinels.procs[i].proc.Start
	case f.Target == "etcd":
		r.etcd.proc.Kill()
		restart = r.etcd.start
	default:
		return fmt.Errorf("no process %s", f.Target)
	}
	time.Sleep(f.For) // the fault's length
	err := restart()
	r.event("%s started again", f.Target)
	return err
}

// quiesce readies a Sentinel shard's primary for a stop or a kill: Redis
// replicates asynchronously, so a primary killed at an arbitrary moment
// may take acknowledged writes with it, by Redis's design, whatever the
// proxy does. Its writes are refused (min-replicas-to-write above the
// replicas it has: -NOREPLICAS, an answer that says the write was not
// made) until its replica has everything it acknowledged; then nothing
// acknowledged is lost but by the proxy. resume takes them again, for a
// primary stopped and continued once the Sentinels have decided. Other
// servers need nothing.
//
// Not CLIENT PAUSE WRITE: a pause holds the Sentinels' PUBLISH to
// __sentinel__:hello, and their PINGs behind it on the same link, so a
// primary continued while its pause lasts looks down to them, and they
// failed it over after their verdict to keep it was read (seed 4279:
// writes it acknowledged after the pause ended were lost as it was
// demoted). A refused write holds nothing.
func (r *run) quiesce(target string, s *Server) (resume func(), err error) {
	if !strings.HasSuffix(target, "/primary") {
		return func() {}, nil
	}
	sh := r.sentinels.shardOf(target)
	replica := r.sentinels.node(sh, "replica")
	if _, err := redisDo(s.Direct(), "CONFIG", "SET", "min-replicas-to-write", "100"); err != nil {
		// It may have applied with its answer lost: undone, as far as
		// the server answers.
		_, _ = redisDo(s.Direct(), "CONFIG", "SET", "min-replicas-to-write", "0")
		return nil, fmt.Errorf("refusing writes on %s: %w", s.Name, err)
	}
	resume = func() {
		if _, err := redisDo(s.Direct(), "CONFIG", "SET", "min-replicas-to-write", "0"); err != nil {
			r.trouble(fmt.Sprintf("%s takes no write again: %v", s.Name, err))
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		p, perr := infoField(s.Direct(), "replication", "master_repl_offset")
		q, qerr := infoField(replica.Direct(), "replication", "slave_repl_offset")
		if perr == nil && qerr == nil && p == q {
			return resume, nil
		}
		if time.Now().After(deadline) {
			// The replica is away (stopped, killed): the Sentinels
			// cannot promote it until it is back and has caught up.
			r.event("%s: its replica %s is not in step (%s against %s); going on", s.Name, replica.Name, q, p)
			return resume, nil
		}
		time.Sleep(10 * time.Millisecond) // polling the replica's offset
	}
}

// link makes the link to a server slow, stalled or cut for f.For.
func (r *run) link(f Fault) error {
	s := r.server(f.Target)
	if s == nil || s.Relay == nil {
		return fmt.Errorf("no link to %s", f.Target)
	}
	switch f.Kind {
	case "slow":
		r.event("slow link to %s by %v", f.Target, f.Delay)
		s.Relay.Slow(f.Delay)
	case "stall":
		r.event("stall link to %s", f.Target)
		s.Relay.Stall()
	case "cut":
		r.event("cut link to %s", f.Target)
		s.Relay.Cut()
	}
	time.Sleep(f.For) // the fault's length
	r.event("heal link to %s", f.Target)
	s.Relay.Heal()
	return nil
}
