// Package sentineltest starts Redis shards of a primary and a replica
// each, watched by three redis-sentinel processes, on 127.0.0.1, for
// tests of what follows Sentinel's failovers.
package sentineltest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/resp"
	"github.com/kolco-dev/kolco/internal/testproc"
	"github.com/kolco-dev/kolco/internal/tlstest"
)

// Process is a redis-server or redis-sentinel the test started.
type Process struct {
	Addr string
	Port int
	// TLSAddr is where a Sentinel started by StartTLS speaks TLS; empty
	// for the others.
	TLSAddr string
	tlsPort int
	args    []string
	bin     string
	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  <-chan struct{}
}

// start starts bin with args(port) on a free port that it is the one to
// answer on (see realprog.StartOwned); Cleanup kills it.
func start(t testing.TB, bin string, args func(port int) []string) *Process {
	st := realprog.StartOwned(t, filepath.Base(bin), bin, args, realprog.RedisPID)
	p := &Process{Addr: fmt.Sprintf("127.0.0.1:%d", st.Port), Port: st.Port, args: st.Args, bin: bin, cmd: st.Cmd, exited: st.Exited}
	t.Cleanup(p.Kill)
	return p
}

// Start starts the process again, with the arguments it was first
// started with, and waits until it listens.
func (p *Process) Start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(p.bin, p.args...)
	if err := testproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
	ports := []int{p.Port}
	if p.tlsPort != 0 {
		ports = append(ports, p.tlsPort)
	}
	realprog.WaitListening(t, filepath.Base(p.bin), ports, exited)
}

// Kill kills the process (SIGKILL) and waits for it to exit.
func (p *Process) Kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// Signal sends sig to the process (SIGSTOP freezes it, SIGCONT resumes).
func (p *Process) Signal(sig os.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Signal(sig)
}

// Shard is a primary and its replica under one master name.
type Shard struct {
	Name             string
	Primary, Replica *Process
}

// Cluster is the shards and the Sentinels that watch them.
type Cluster struct {
	Shards    []*Shard
	Sentinels []*Process
	// DownAfter is the Sentinels' down-after-milliseconds: how long a
	// primary is silent before they fail it over.
	DownAfter time.Duration
	// ClientTLS, for Sentinels started by StartTLS, is what a client of
	// their tls-port needs: their authority, and a certificate it signed.
	ClientTLS TLSFiles
}

// SentinelAddrs returns the Sentinels' addresses.
func (c *Cluster) SentinelAddrs() []string {
	out := make([]string, len(c.Sentinels))
	for i, s := range c.Sentinels {
		out[i] = s.Addr
	}
	return out
}

// SentinelTLSAddrs returns the addresses where the Sentinels speak TLS
// (see StartTLS).
func (c *Cluster) SentinelTLSAddrs() []string {
	out := make([]string, len(c.Sentinels))
	for i, s := range c.Sentinels {
		out[i] = s.TLSAddr
	}
	return out
}

// TLSFiles are PEM files of a certificate authority and a certificate it
// signed, with its key.
type TLSFiles struct {
	CAFile, CertFile, KeyFile string
}

// Start starts a shard of a primary and a replica per name, and three
// Sentinels (quorum 2) that fail a primary over after downAfter of
// silence, and waits until every Sentinel knows every shard's replica and
// the other Sentinels, so that a failover can happen. It skips the test
// when redis-server or redis-sentinel is not installed (fails it in CI).
func Start(t testing.TB, downAfter time.Duration, names ...string) *Cluster {
	t.Helper()
	return startCluster(t, downAfter, nil, names)
}

// StartTLS is Start with Sentinels that also listen on a tls-port
// (SentinelTLSAddrs) with a certificate of a new authority, asking each
// client there for a certificate it signed (ClientTLS has one). Among
// themselves and to the servers they speak plaintext, on their port.
func StartTLS(t testing.TB, downAfter time.Duration, names ...string) *Cluster {
	t.Helper()
	dir := t.TempDir()
	ca := tlstest.NewCA(t, dir, "sentinels")
	server, client := ca.Issue(t, "sentinel", tlstest.Options{}), ca.Issue(t, "client", tlstest.Options{})
	c := startCluster(t, downAfter, &TLSFiles{CAFile: ca.CertFile, CertFile: server.CertFile, KeyFile: server.KeyFile}, names)
	c.ClientTLS = TLSFiles{CAFile: ca.CertFile, CertFile: client.CertFile, KeyFile: client.KeyFile}
	return c
}

// startCluster starts the shards and the Sentinels, with a tls-port of
// files when files is not nil.
func startCluster(t testing.TB, downAfter time.Duration, files *TLSFiles, names []string) *Cluster {
	t.Helper()
	server := realprog.Binary(t, "redis-server", "redis-server")
	sentinel := realprog.Binary(t, "redis-sentinel", "redis-sentinel")
	c := &Cluster{DownAfter: downAfter}
	for _, name := range names {
		// Each server in a directory of its own: a replica writes the
		// data its primary sends it to dump.rdb there, which a server
		// started later in the same directory would load.
		base := func() []string {
			// A replica synchronises at once, not after diskless sync's
			// default wait of five seconds for more replicas.
			return []string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir(), "--repl-diskless-sync-delay", "0"}
		}
		primary := start(t, server, func(port int) []string { return append([]string{"--port", strconv.Itoa(port)}, base()...) })
		replica := start(t, server, func(port int) []string {
			return append([]string{"--port", strconv.Itoa(port), "--replicaof", "127.0.0.1", strconv.Itoa(primary.Port)}, base()...)
		})
		c.Shards = append(c.Shards, &Shard{Name: name, Primary: primary, Replica: replica})
	}
	dir := t.TempDir()
	for i := range 3 {
		path := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", i))
		tlsPort := 0
		if files != nil {
			tlsPort = realprog.FreePorts(t, 1)[0]
		}
		p := start(t, sentinel, func(port int) []string {
			conf := fmt.Sprintf("port %d\nbind 127.0.0.1\nsentinel resolve-hostnames no\n", port)
			if files != nil {
				conf += fmt.Sprintf("tls-port %d\ntls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\ntls-auth-clients yes\n",
					tlsPort, files.CertFile, files.KeyFile, files.CAFile)
			}
			for _, s := range c.Shards {
				conf += fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %s %d\n"+
					"sentinel failover-timeout %s 5000\nsentinel parallel-syncs %s 1\n",
					s.Name, s.Primary.Port, s.Name, downAfter.Milliseconds(), s.Name, s.Name)
			}
			if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{path}
		})
		if files != nil {
			p.tlsPort, p.TLSAddr = tlsPort, fmt.Sprintf("127.0.0.1:%d", tlsPort)
			realprog.WaitListening(t, "redis-sentinel", []int{tlsPort}, p.exited)
		}
		c.Sentinels = append(c.Sentinels, p)
	}
	c.WaitReady(t)
	return c
}

// WaitReady waits, up to 30 s, until each shard's replica has
// synchronised with its primary, and every Sentinel knows each shard's
// replica and the two other Sentinels.
func (c *Cluster) WaitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, s := range c.Shards {
		for !linked(s.Replica.Addr) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the replica %s has not synchronised with its primary after 30 s", s.Name, s.Replica.Addr)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for _, sp := range c.Sentinels {
		for _, s := range c.Shards {
			for !c.knows(sp.Addr, s.Name) {
				if time.Now().After(deadline) {
					t.Fatalf("sentinel %s does not know %s's replica and the other sentinels after 30 s", sp.Addr, s.Name)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
}

func (c *Cluster) knows(sentinel, name string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	conn, err := resp.Dial(ctx, sentinel)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	replicas, err := conn.Do("SENTINEL", "REPLICAS", name)
	if err != nil || len(replicas.Elems) == 0 {
		return false
	}
	others, err := conn.Do("SENTINEL", "SENTINELS", name)
	return err == nil && len(others.Elems) == len(c.Sentinels)-1
}

// Do runs a command on addr and returns its reply.
func Do(addr string, args ...string) (resp.Value, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	conn, err := resp.Dial(ctx, addr)
	if err != nil {
		return resp.Value{}, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	return conn.Do(args...)
}

// Role returns "master" or "slave", as the server at addr says of itself.
func Role(addr string) string {
	v, err := Do(addr, "ROLE")
	if err != nil || len(v.Elems) == 0 {
		return ""
	}
	return v.Elems[0].Str
}

// WaitPromoted waits, up to timeout, until s's replica says it is a
// primary, and swaps s's Primary and Replica.
func (s *Shard) WaitPromoted(t testing.TB, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for Role(s.Replica.Addr) != "master" {
		if time.Since(start) > timeout {
			t.Fatalf("%s: the replica %s was not promoted within %v", s.Name, s.Replica.Addr, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Primary, s.Replica = s.Replica, s.Primary
	return time.Since(start)
}

// linked reports whether the replica at addr has synchronised with its
// primary and is linked to it.
func linked(addr string) bool {
	v, err := Do(addr, "INFO", "replication")
	return err == nil && strings.Contains(v.Str, "master_link_status:up") && !strings.Contains(v.Str, "master_sync_in_progress:1")
}
