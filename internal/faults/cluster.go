package faults

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
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

// etcdProc is the run's etcd.
type etcdProc struct {
	proc     *Proc
	endpoint string
}

// topology returns what a run of combo starts, by name.
func topologyOf(c Combo, proxies int) topology {
	t := topology{proxies: proxies, etcd: c.Source == "etcd"}
	if c.Source == "sentinel" {
		t.shards = []string{"s0", "s1", "s2"}
		t.initial = t.shards[:2]
		t.sentinels = 3
		return t
	}
	prefix := "m"
	if c.Redis {
		prefix = "r"
	}
	for i := range 5 {
		t.servers = append(t.servers, fmt.Sprintf("%s%d", prefix, i))
	}
	t.initial = t.servers[:4]
	return t
}

// startCluster starts the run's servers, Sentinels, etcd and sidecars,
// and records the initial membership in its source.
func (r *run) startCluster() error {
	for _, name := range r.topo.servers {
		s, err := r.startServer(name, r.combo.Redis, nil)
		if err != nil {
			return err
		}
		if s.Relay, err = NewRelay(s.Direct()); err != nil {
			return err
		}
		r.cleanup(s.Relay.Close)
		r.servers = append(r.servers, s)
	}
	for _, name := range r.topo.shards {
		sh := &shard{Name: name}
		var err error
		if sh.nodes[0], err = r.startServer(name+"a", true, func(s *Server) string { return r.primaryFor(sh, s) }); err != nil {
			return err
		}
		if sh.nodes[1], err = r.startServer(name+"b", true, func(s *Server) string { return r.primaryFor(sh, s) }); err != nil {
			return err
		}
		r.shards = append(r.shards, sh)
	}
	if len(r.shards) > 0 {
		if err := r.startSentinels(); err != nil {
			return err
		}
	}
	r.members = append([]string(nil), r.topo.initial...)
	switch r.combo.Source {
	case "file":
		r.membersFile = filepath.Join(r.dir, "members.yml")
		return r.writeMembersFile()
	case "etcd":
		return r.startEtcd()
	case "gossip":
		r.keyFile = filepath.Join(r.dir, "gossip.keys")
		if err := os.WriteFile(r.keyFile, []byte(gossipKey+"\n"), 0o600); err != nil {
			return err
		}
		for _, name := range r.members {
			if err := r.startSidecar(name); err != nil {
				return err
			}
		}
	}
	return nil
}

// startSentinels starts three Sentinels watching every shard, quorum 2,
// and waits until each knows every shard's replica and the other two.
func (r *run) startSentinels() error {
	ports := realprog.RestartablePorts(r.t, 3)
	for i, port := range ports {
		conf := filepath.Join(r.dir, fmt.Sprintf("sentinel%d.conf", i))
		c := fmt.Sprintf("port %d\nbind 127.0.0.1\nsentinel resolve-hostnames no\n", port)
		for _, sh := range r.shards {
			c += fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %s %d\n"+
				"sentinel failover-timeout %s 5000\nsentinel parallel-syncs %s 1\n",
				sh.Name, sh.nodes[0].Port, sh.Name, sentinelDown.Milliseconds(), sh.Name, sh.Name)
		}
		if err := os.WriteFile(conf, []byte(c), 0o600); err != nil {
			return err
		}
		sp := &sentinelProc{addr: fmt.Sprintf("127.0.0.1:%d", port),
			proc: newProc(r.sp, fmt.Sprintf("sentinel%d", i), func() *exec.Cmd { return exec.Command(r.bins.sentinel, conf) })}
		if err := sp.proc.Start(); err != nil {
			return err
		}
		r.cleanup(sp.proc.Kill)
		r.sentinels = append(r.sentinels, sp)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, sp := range r.sentinels {
		for _, sh := range r.shards {
			for !r.sentinelKnows(sp.addr, sh.Name) {
				if time.Now().After(deadline) {
					return fmt.Errorf("sentinel %s does not know %s's replica and the other Sentinels after 30 s:\n%s", sp.addr, sh.Name, sp.proc.Output())
				}
				time.Sleep(100 * time.Millisecond) // polling for readiness, not ordering
			}
		}
	}
	return nil
}

func (r *run) sentinelKnows(sentinel, name string) bool {
	replicas, err := redisDo(sentinel, "SENTINEL", "REPLICAS", name)
	if err != nil || len(replicas.Elems) == 0 {
		return false
	}
	others, err := redisDo(sentinel, "SENTINEL", "SENTINELS", name)
	return err == nil && len(others.Elems) == len(r.sentinels)-1
}

// node returns the shard's primary or replica now, by what each server
// says of itself (a restarted old primary says master until the Sentinels
// demote it: then the Sentinels' word decides).
func (r *run) node(sh *shard, role string) *Server {
	a, b := sh.nodes[0], sh.nodes[1]
	ra, rb := serverRole(a.Direct()), serverRole(b.Direct())
	primary := a
	switch {
	case ra == "master" && rb != "master":
	case rb == "master" && ra != "master":
		primary = b
	default:
		for _, sp := range r.sentinels {
			if v, err := redisDo(sp.addr, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", sh.Name); err == nil && len(v.Elems) == 2 {
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
func (r *run) primaryFor(sh *shard, s *Server) string {
	if sh.nodes[0] == nil {
		return "" // the shard's first node, starting
	}
	primary := sh.nodes[0].Direct()
	for _, sp := range r.sentinels {
		if v, err := redisDo(sp.addr, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", sh.Name); err == nil && len(v.Elems) == 2 {
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

// startEtcd starts etcd, adds the initial members, and for a
// history-dependent distribution keeps its state there.
func (r *run) startEtcd() error {
	ports := realprog.RestartablePorts(r.t, 2)
	client := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	data := filepath.Join(r.dir, "etcd")
	args := []string{"--name", "faults", "--data-dir", data,
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "faults=" + peer,
		"--heartbeat-interval", "50", "--election-timeout", "500", "--logger", "zap", "--log-outputs", "stderr", "--log-level", "error"}
	r.etcd = &etcdProc{endpoint: client, proc: newProc(r.sp, "etcd", func() *exec.Cmd { return exec.Command(r.bins.etcd, args...) })}
	r.cleanup(r.etcd.proc.Kill)
	if err := r.etcd.start(); err != nil {
		return err
	}
	for _, name := range r.members {
		if err := r.members1("add", name, "--addr", r.addrOf(name)); err != nil {
			return err
		}
	}
	if r.combo.historyDependent() {
		return r.members1("state", "--init", r.combo.Algorithm)
	}
	return nil
}

// start starts etcd (again, with its data) and waits until it serves.
func (e *etcdProc) start() error {
	if err := e.proc.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(15 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get(e.endpoint + "/health")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"true"`) {
				return nil
			}
		}
		if !e.proc.Running() || time.Now().After(deadline) {
			return fmt.Errorf("etcd not serving: %v\n%s", err, e.proc.Output())
		}
		time.Sleep(50 * time.Millisecond) // polling for readiness, not ordering
	}
}

// members1 runs one "kolco members" command on the run's etcd.
func (r *run) members1(args ...string) error {
	cmd := r.env.Kolco(append([]string{"members", "--endpoints", r.etcd.endpoint, "--prefix", etcdPrefix}, args...)...)
	out, err := r.sp.run(cmd, 20*time.Second)
	if err != nil {
		return fmt.Errorf("kolco members %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// startSidecar starts the gossip sidecar of server name, on the gossip
// port it had, if it had one.
func (r *run) startSidecar(name string) error {
	sc := r.sidecars[name]
	if sc == nil {
		port := realprog.RestartablePorts(r.t, 1)[0]
		sc = &sidecarProc{gossip: fmt.Sprintf("127.0.0.1:%d", port)}
		seeds := r.gossipSeeds()
		addr := r.addrOf(name)
		sc.proc = newProc(r.sp, "sidecar "+name, func() *exec.Cmd {
			args := []string{"members", "register", "--gossip", sc.gossip, "--probe-interval", gossipProbe.String(), "--key-file", r.keyFile}
			if len(seeds) > 0 {
				args = append(args, "--seed", strings.Join(seeds, ","))
			}
			return r.env.Kolco(append(args, name, addr)...)
		})
		r.cleanup(sc.proc.Kill)
		r.sidecars[name] = sc
	}
	if err := sc.proc.Start(); err != nil {
		return err
	}
	port, _ := strconv.Atoi(sc.gossip[strings.LastIndexByte(sc.gossip, ':')+1:])
	deadline := time.Now().Add(10 * time.Second)
	for !listening(port) {
		if !sc.proc.Running() || time.Now().After(deadline) {
			return fmt.Errorf("sidecar %s not gossiping:\n%s", name, sc.proc.Output())
		}
		time.Sleep(20 * time.Millisecond) // polling for readiness, not ordering
	}
	return nil
}

// sidecarProc is a "kolco members register --gossip" process.
type sidecarProc struct {
	proc   *Proc
	gossip string
}

// gossipSeeds are the gossip addresses of the first two sidecars.
func (r *run) gossipSeeds() []string {
	var out []string
	for _, name := range r.topo.initial {
		if sc := r.sidecars[name]; sc != nil && len(out) < 2 {
			out = append(out, sc.gossip)
		}
	}
	return out
}
