package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// shard is a Sentinel master: two redis-servers, one the primary.
type shard struct {
	Name  string
	nodes [2]*Server
}

// sentinelProc is a redis-sentinel of a run.
type sentinelProc struct {
	proc *Proc
	addr string
}

// sentinels are a Sentinel pool's shards and the redis-sentinels that
// watch them: what the Sentinels say decides which node of a shard is its
// primary, when the nodes' own word does not.
type sentinels struct {
	shards []*shard
	procs  []*sentinelProc
}

// start starts a Sentinel on each of ports watching every shard, quorum
// 2, its configuration written in dir, and waits until each knows every
// shard's replica and the other Sentinels. cleanup is given each one's
// kill.
func (ss *sentinels) start(sp *spawner, binary, dir string, ports []int, cleanup func(func())) error {
	for i, port := range ports {
		conf := filepath.Join(dir, fmt.Sprintf("sentinel%d.conf", i))
		c := fmt.Sprintf("port %d\nbind 127.0.0.1\nsentinel resolve-hostnames no\n", port)
		for _, sh := range ss.shards {
			c += fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %s %d\n"+
				"sentinel failover-timeout %s 5000\nsentinel parallel-syncs %s 1\n",
				sh.Name, sh.nodes[0].Port, sh.Name, sentinelDown.Milliseconds(), sh.Name, sh.Name)
		}
		if err := os.WriteFile(conf, []byte(c), 0o600); err != nil {
			return err
		}
		p := &sentinelProc{addr: fmt.Sprintf("127.0.0.1:%d", port),
			proc: newProc(sp, fmt.Sprintf("sentinel%d", i), func() *exec.Cmd { return exec.Command(binary, conf) })}
		if err := p.proc.Start(); err != nil {
			return err
		}
		cleanup(p.proc.Kill)
		ss.procs = append(ss.procs, p)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range ss.procs {
		for _, sh := range ss.shards {
			for !ss.knows(p.addr, sh.Name) {
				if time.Now().After(deadline) {
					return fmt.Errorf("sentinel %s does not know %s's replica and the other Sentinels after 30 s:\n%s", p.addr, sh.Name, p.proc.Output())
				}
				time.Sleep(100 * time.Millisecond) // polling for readiness, not ordering
			}
		}
	}
	return nil
}

// knows reports whether the Sentinel at addr knows the replica of the
// shard name and the other Sentinels.
func (ss *sentinels) knows(addr, name string) bool {
	replicas, err := redisDo(addr, "SENTINEL", "REPLICAS", name)
	if err != nil || len(replicas.Elems) == 0 {
		return false
	}
	others, err := redisDo(addr, "SENTINEL", "SENTINELS", name)
	return err == nil && len(others.Elems) == len(ss.procs)-1
}

// addrs are the Sentinels' addresses, for the pool's configuration.
func (ss *sentinels) addrs() []string {
	var out []string
	for _, p := range ss.procs {
		out = append(out, p.addr)
	}
	return out
}

// shardOf returns the shard of a target "shard/role", nil for another.
func (ss *sentinels) shardOf(target string) *shard {
	name, _, _ := strings.Cut(target, "/")
	for _, sh := range ss.shards {
		if sh.Name == name {
			return sh
		}
	}
	return nil
}

// node returns the shard's primary or replica now, by what each server
// says of itself (a restarted old primary says master until the Sentinels
// demote it: then the Sentinels' word decides).
func (ss *sentinels) node(sh *shard, role string) *Server {
	a, b := sh.nodes[0], sh.nodes[1]
	ra, rb := serverRole(a.Direct()), serverRole(b.Direct())
	primary := a
	switch {
	case ra == "master" && rb != "master":
	case rb == "master" && ra != "master":
		primary = b
	default:
		for _, p := range ss.procs {
			if v, err := redisDo(p.addr, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", sh.Name); err == nil && len(v.Elems) == 2 {
				if v.Elems[1].Str == strconv.Itoa(b.Port) {
					primary = b
				}
				break
			}
		}
	}
	if role == "primary" {
		return primary
	}
	if primary == a {
		return b
	}
	return a
}

// primaryFor is the primary a node of the shard replicates when it
// starts: the one the Sentinels name, unless that is the node itself (a
// primary killed and started again before they failed it over); before
// there are Sentinels, the shard's first node.
func (ss *sentinels) primaryFor(sh *shard, s *Server) string {
	if sh.nodes[0] == nil {
		return "" // the shard's first node, starting
	}
	primary := sh.nodes[0].Direct()
	for _, p := range ss.procs {
		if v, err := redisDo(p.addr, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", sh.Name); err == nil && len(v.Elems) == 2 {
			primary = v.Elems[0].Str + ":" + v.Elems[1].Str
			break
		}
	}
	if primary == s.Direct() {
		return ""
	}
	return primary
}

// serverRole is what ROLE says: master, slave, or "" with no answer.
func serverRole(addr string) string {
	v, err := redisDo(addr, "ROLE")
	if err != nil || len(v.Elems) == 0 {
		return ""
	}
	return v.Elems[0].Str
}

// await waits, up to 20 s, until the Sentinels' word on the shard whose
// primary was s is final, telling event what they decided: they failed it
// over to the other node, or every Sentinel names s, sees nothing wrong
// with it and has had an answer to a PING since s continued at since. A
// primary that came back while the Sentinels were failing it over would
// take writes and then lose them, demoted - Sentinel's own window of
// loss, which an operator closes by starting a failed primary only once
// the Sentinels have decided. So a killed primary is started again once
// they have (as the replica of the one they promoted, see primaryFor),
// and a stopped one, continued, takes writes again only then.
//
// Every Sentinel, not those that answer: one stopped beside the primary
// holds its view of before, and the word of one that answered in time
// alone was read as "keep" while the others were about to fail the
// primary over (seed 4279).
//
// It reports whether they decided within 45 s (a Sentinel continued
// after a stop of its own may be in TILT for 30 s, acting on nothing and
// keeping its flags of before); when not, the caller keeps the primary's
// writes refused.
func (ss *sentinels) await(sh *shard, s *Server, since time.Time, event func(format string, args ...any)) (decided bool) {
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		views := ss.views(sh, since)
		if master := failedOver(views, s.Direct()); master != "" {
			event("the Sentinels failed %s over to %s", sh.Name, master)
			// A stopped primary continued is theirs to demote: until it
			// says it is a replica, it must take no write.
			for s.Proc.Running() && serverRole(s.Direct()) != "slave" {
				if time.Now().After(deadline) {
					event("%s does not say it is a replica after 45 s", s.Name)
					return false
				}
				time.Sleep(50 * time.Millisecond) // polling its role
			}
			return true
		}
		if s.Proc.Running() && keep(views, s.Direct()) {
			event("the Sentinels keep %s at %s", sh.Name, s.Direct())
			return true
		}
		time.Sleep(50 * time.Millisecond) // polling the Sentinels
	}
	event("the Sentinels have not decided on %s after 45 s", sh.Name)
	return false
}

// masterView is what one Sentinel says of a shard: ok is false when it
// did not answer.
type masterView struct {
	ok          bool
	addr, flags string
	// fresh: a PING the primary answered came after since (see views).
	fresh bool
}

// views asks every Sentinel at once what it says of the shard, each
// within redisDo's bound; a view is fresh when the PING its Sentinel last
// had answered came after since, by the time of its own answer.
func (ss *sentinels) views(sh *shard, since time.Time) []masterView {
	views := make([]masterView, len(ss.procs))
	var wg sync.WaitGroup
	for i, p := range ss.procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := redisDo(p.addr, "SENTINEL", "MASTER", sh.Name)
			answered := time.Now()
			if err != nil {
				return
			}
			fields, _ := v.Strings()
			var ip, port string
			mv := masterView{ok: true}
			for j := 0; j+1 < len(fields); j += 2 {
				switch fields[j] {
				case "ip":
					ip = fields[j+1]
				case "port":
					port = fields[j+1]
				case "flags":
					mv.flags = fields[j+1]
				case "last-ok-ping-reply":
					if ms, err := strconv.ParseInt(fields[j+1], 10, 64); err == nil {
						mv.fresh = answered.Add(-time.Duration(ms) * time.Millisecond).After(since)
					}
				}
			}
			mv.addr = ip + ":" + port
			views[i] = mv
		}()
	}
	wg.Wait()
	return views
}

// failedOver returns the node every Sentinel that answers names as the
// primary when it is not was, and none is failing it over still.
func failedOver(views []masterView, was string) string {
	master := ""
	for _, v := range views {
		if !v.ok {
			continue
		}
		if v.addr == was || (master != "" && v.addr != master) || strings.Contains(v.flags, "failover") {
			return ""
		}
		master = v.addr
	}
	return master
}

// keep reports whether every Sentinel answers, names was, sees it as a
// plain master (not down, not failing over) and had a PING answered by
// it since it continued.
func keep(views []masterView, was string) bool {
	for _, v := range views {
		if !v.ok || v.addr != was || v.flags != "master" || !v.fresh {
			return false
		}
	}
	return len(views) > 0
}
