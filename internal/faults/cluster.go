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
	"syscall"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
)

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
		if sh.nodes[0], err = r.startServer(name+"a", true, func(s *Server) string { return r.sentinels.primaryFor(sh, s) }); err != nil {
			return err
		}
		if sh.nodes[1], err = r.startServer(name+"b", true, func(s *Server) string { return r.sentinels.primaryFor(sh, s) }); err != nil {
			return err
		}
		r.sentinels.shards = append(r.sentinels.shards, sh)
	}
	if len(r.sentinels.shards) > 0 {
		ports := realprog.RestartablePorts(r.t, 3)
		if err := r.sentinels.start(r.sp, r.bins.sentinel, r.dir, ports, r.cleanup); err != nil {
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

// start starts etcd (again, with its data) and waits until it serves:
// 15 s, stretched by how busy the machine is (realprog.Busy). Beside eight
// busy processes etcd took 21 s to serve after a kill -9, and a fixed 15 s
// made the schedule give up on a run that had lost nothing (seed 1064).
func (e *etcdProc) start() error {
	if err := e.proc.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Duration(realprog.Busy() * float64(15*time.Second)))
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
		seeds := r.sidecars.seeds(r.topo.initial)
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

// sidecars are a gossip source's sidecars, by server name: each keeps
// its gossip address when it is stopped and started again.
type sidecars map[string]*sidecarProc

// seeds are the gossip addresses of the first two sidecars of initial.
func (scs sidecars) seeds(initial []string) []string {
	var out []string
	for _, name := range initial {
		if sc := scs[name]; sc != nil && len(out) < 2 {
			out = append(out, sc.gossip)
		}
	}
	return out
}

// stop stops the sidecar of server name, if it runs, and waits up to
// 10 s for it to end.
func (scs sidecars) stop(name string) error {
	sc := scs[name]
	if sc == nil || !sc.proc.Running() {
		return nil
	}
	if err := sc.proc.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-sc.proc.Exited():
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("sidecar %s still running 10 s after SIGTERM", name)
	}
}
