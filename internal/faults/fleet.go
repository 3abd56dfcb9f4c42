package faults

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// proxyProc is a "kolco proxy" process of a run, and the processes that
// took over from it by handovers.
type proxyProc struct {
	Name                   string
	listen, admin, gossip  string
	conf, pidFile, logFile string
	proc                   *Proc

	mu     sync.Mutex // guards groups
	groups []int      // the process groups of its starts: a handover's new process joins its parent's
}

// poolStatus is what a run reads of a proxy's pool in /v1/pools.
type poolStatus struct {
	Servers []struct {
		Name   string `json:"name"`
		Addr   string `json:"addr"`
		Up     bool   `json:"up"`
		Health string `json:"health"`
	} `json:"servers"`
	Membership struct {
		Fingerprint string `json:"fingerprint"`
		Stale       bool   `json:"stale"`
		Error       string `json:"error"`
		Revision    int64  `json:"revision"`
		Source      int64  `json:"source_revision"`
	} `json:"membership"`
	Move json.RawMessage `json:"move"`
}

// startProxies writes each proxy's configuration and starts it. Its ports
// are free when chosen, but another program on the machine may take one
// before the proxy binds it (seed 219 once found its listening port
// taken): then every proxy starts again on other ports, as their
// configurations name each other's.
func (r *run) startProxies() error {
	for i := range r.cfg.Proxies {
		dir := filepath.Join(r.dir, fmt.Sprintf("proxy%d", i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		p := &proxyProc{Name: fmt.Sprintf("proxy%d", i), conf: filepath.Join(dir, "nutcracker.yml"),
			pidFile: filepath.Join(dir, "kolco.pid"), logFile: filepath.Join(dir, "kolco.log")}
		p.proc = newProc(r.sp, p.Name, func() *exec.Cmd {
			cmd := r.env.Kolco("proxy", "-c", p.conf, "-p", p.pidFile, "-o", p.logFile)
			if r.env.Reaper {
				cmd = reaped(cmd)
			}
			if cmd.SysProcAttr == nil {
				cmd.SysProcAttr = &syscall.SysProcAttr{}
			}
			cmd.SysProcAttr.Setpgid = true
			return cmd
		})
		r.proxies = append(r.proxies, p)
		r.cleanup(p.killAll)
	}
	for attempt := 1; ; attempt++ {
		ports := realprog.RestartablePorts(r.t, 3*r.cfg.Proxies)
		for i, p := range r.proxies {
			p.listen, p.admin, p.gossip = fmt.Sprintf("127.0.0.1:%d", ports[3*i]),
				fmt.Sprintf("127.0.0.1:%d", ports[3*i+1]), fmt.Sprintf("127.0.0.1:%d", ports[3*i+2])
		}
		failed, err := startEach(r.proxies, r.proxyConfig)
		if err == nil || attempt == 3 || !failed.portTaken() {
			return err
		}
		r.t.Logf("%s: a port of %s was taken by another program as it started; every proxy again on other ports", err, failed.Name)
		for _, p := range r.proxies {
			p.killAll()
		}
	}
}

// startEach writes each proxy's configuration, as config makes it, and
// starts it; the error is the first proxy's that did not start, returned
// with it.
func startEach(proxies []*proxyProc, config func(*proxyProc) string) (*proxyProc, error) {
	for _, p := range proxies {
		if err := os.WriteFile(p.conf, []byte(config(p)), 0o600); err != nil {
			return p, err
		}
		if err := p.start(); err != nil {
			return p, err
		}
	}
	return nil, nil
}

// portTaken reports whether another program listens on a TCP port of the
// proxy's, which has exited.
func (p *proxyProc) portTaken() bool {
	for _, addr := range []string{p.listen, p.admin, p.gossip} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return true
		}
		l.Close()
	}
	return false
}

// start starts the proxy's process (under its reaper, see Reap) and
// waits until it serves.
func (p *proxyProc) start() error {
	os.Remove(p.pidFile)
	if err := p.proc.Start(); err != nil {
		return err
	}
	p.mu.Lock()
	p.groups = append(p.groups, p.proc.Pid())
	p.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if pid := readPid(p.pidFile); pid != 0 && alive(pid) {
			if c, err := net.DialTimeout("tcp", p.listen, time.Second); err == nil {
				c.Close()
				return nil
			}
		}
		if !p.proc.Running() {
			return fmt.Errorf("%s exited while starting:\n%s", p.Name, p.logTail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not serving after 30 s:\n%s", p.Name, p.logTail())
		}
		time.Sleep(20 * time.Millisecond) // polling for readiness, not ordering
	}
}

// pid is the proxy process that serves now, by its pid file; 0 when none
// runs.
func (p *proxyProc) pid() int {
	if pid := readPid(p.pidFile); pid != 0 && alive(pid) {
		return pid
	}
	return 0
}

// signal sends sig to the process that serves now.
func (p *proxyProc) signal(sig syscall.Signal) error {
	pid := p.pid()
	if pid == 0 {
		return fmt.Errorf("%s: no process serves", p.Name)
	}
	return testproc.KillOwn(pid, sig)
}

// handover sends SIGUSR2 and waits, up to a minute, until a new process
// serves and the old one has exited.
func (p *proxyProc) handover() error {
	old := p.pid()
	if err := p.signal(syscall.SIGUSR2); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if pid := readPid(p.pidFile); pid != 0 && pid != old && !alive(old) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: the handover from process %d has not ended after a minute (pid file: %d)%s", p.Name, old, readPid(p.pidFile), dumpGoroutines(old))
		}
		time.Sleep(20 * time.Millisecond) // polling for the handover's end, not ordering
	}
}

// dumpGoroutines makes a process that does not end write where each of
// its goroutines waits (SIGQUIT: Go's runtime prints them and exits) to
// the output the failure's kept log holds, and says so.
func dumpGoroutines(pid int) string {
	if pid == 0 || !alive(pid) || testproc.KillOwn(pid, syscall.SIGQUIT) != nil {
		return ""
	}
	for deadline := time.Now().Add(5 * time.Second); alive(pid) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond) // waiting for the dump to be written
	}
	return "; its goroutines (SIGQUIT) are in its output, kept with its log"
}

// kill kills the process that serves now (kill -9) and waits until it has
// exited, and its reaper with it: holding no process then, the reaper
// exits, and a start before it has would find the proxy still running.
func (p *proxyProc) kill() {
	pid := p.pid()
	if pid == 0 {
		return
	}
	_ = testproc.KillOwn(pid, syscall.SIGCONT)
	_ = testproc.KillOwn(pid, syscall.SIGKILL)
	for alive(pid) {
		time.Sleep(10 * time.Millisecond) // waiting for its reaper to reap it
	}
	select {
	case <-p.proc.Exited():
	case <-time.After(30 * time.Second): // a reaper that holds another process: start says so
	}
}

// killAll kills every process of the proxy: its reaper kills what it
// holds when told to (SIGTERM), and each start's process group holds the
// processes handovers started from it, for a run without reapers.
func (p *proxyProc) killAll() {
	p.mu.Lock()
	groups := append([]int(nil), p.groups...)
	p.mu.Unlock()
	if p.proc.Running() {
		_ = p.proc.Signal(syscall.SIGTERM)
		select {
		case <-p.proc.Exited():
		case <-time.After(10 * time.Second):
		}
	}
	for _, g := range groups {
		for _, pid := range inGroup(g) {
			_ = testproc.KillOwn(pid, syscall.SIGCONT)
			_ = testproc.KillOwn(pid, syscall.SIGKILL)
		}
	}
	p.proc.Kill()
}

// inGroup returns the processes of process group g. (A signal to -g would
// reach them at once, but a group, unlike each process, cannot be asked
// whether it runs this executable: KillOwn is given its members.)
func inGroup(g int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: the fields follow the last ')'.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 2 && fields[2] == strconv.Itoa(g) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// logTail is the end of the proxy's log file.
func (p *proxyProc) logTail() string {
	b, _ := os.ReadFile(p.logFile)
	if len(b) > 8<<10 {
		b = b[len(b)-8<<10:]
	}
	return string(b) + p.proc.Output()
}

// pool reads the proxy's pool from its admin endpoint.
func (p *proxyProc) pool() (poolStatus, error) {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + p.admin + "/v1/pools")
	if err != nil {
		return poolStatus{}, err
	}
	defer resp.Body.Close()
	var pools []poolStatus
	if err := json.NewDecoder(resp.Body).Decode(&pools); err != nil {
		return poolStatus{}, err
	}
	if len(pools) != 1 {
		return poolStatus{}, fmt.Errorf("%s: %d pools", p.Name, len(pools))
	}
	return pools[0], nil
}

// settled reports whether the pool serves every server it has and moves
// nothing, and why not.
func (s poolStatus) settled() (bool, string) {
	for _, sv := range s.Servers {
		if !sv.Up || sv.Health != "up" {
			return false, fmt.Sprintf("server %s is %s", sv.Name, sv.Health)
		}
	}
	if len(s.Move) > 0 && string(s.Move) != "null" {
		return false, "a move is under way"
	}
	if s.Membership.Stale {
		return false, fmt.Sprintf("its view of the source is stale (revision %d of %d): %s", s.Membership.Revision, s.Membership.Source, s.Membership.Error)
	}
	return true, ""
}

// readPid returns the pid a pid file holds, or 0.
func readPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}
