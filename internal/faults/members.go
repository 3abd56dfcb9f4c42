package faults

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// change applies a membership change, "add NAME" or "remove NAME",
// through the pool's source: a reload of every proxy for a static list
// (and a Sentinel pool's masters), the members file, etcd (kolco members),
// or a gossip sidecar started or stopped.
func (r *run) change(spec string) error {
	r.memberMu.Lock()
	defer r.memberMu.Unlock()
	op, name, _ := strings.Cut(spec, " ")
	if op == "add" {
		if !slices.Contains(r.members, name) {
			r.members = append(r.members, name)
		}
	} else {
		r.members = slices.DeleteFunc(r.members, func(m string) bool { return m == name })
	}
	r.event("membership: %s", spec)
	switch r.combo.Source {
	case "file":
		return r.writeMembersFile()
	case "etcd":
		args := []string{"remove", name}
		if op == "add" {
			args = []string{"add", name, "--addr", r.addrOf(name)}
		}
		var err error
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
			if err = r.members1(args...); err == nil {
				return nil
			}
			time.Sleep(500 * time.Millisecond) // etcd away: the next try
		}
		return err
	case "gossip":
		if op == "add" {
			return r.startSidecar(name)
		}
		return r.sidecars.stop(name)
	}
	for _, p := range r.proxies {
		if err := writeAtomically(p.conf, r.proxyConfig(p)); err != nil {
			return err
		}
		if err := p.signal(syscall.SIGHUP); err != nil {
			return fmt.Errorf("%s: SIGHUP: %w", p.Name, err)
		}
	}
	// Each proxy keeps its own record of a history-dependent placement,
	// so each must apply every version, as an operator's rolling reload
	// checks it does: a proxy stopped across two changes reads only the
	// second when it continues, and placed otherwise than the others for
	// good (seed 4507, power: a store's move waited on a fleet that
	// disagreed). The next change waits until every proxy serves this one.
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range r.proxies {
		for !p.serves(r.members) {
			if time.Now().After(deadline) {
				r.event("%s does not serve %v after 30 s; going on", p.Name, r.members)
				break
			}
			time.Sleep(100 * time.Millisecond) // polling its admin endpoint
		}
	}
	return nil
}

// serves reports whether the proxy's pool has exactly the servers names.
func (p *proxyProc) serves(names []string) bool {
	st, err := p.pool()
	if err != nil || len(st.Servers) != len(names) {
		return false
	}
	for _, sv := range st.Servers {
		if !slices.Contains(names, sv.Name) {
			return false
		}
	}
	return true
}

// writeAtomically replaces the file at path with data at once: a proxy
// reloading meanwhile (a SIGHUP of the schedule's) reads the old file or
// the new, never a part.
func writeAtomically(path, data string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// starve pins the proxy's threads to one core and runs busy processes
// pinned beside it for d: the proxy gets a share of one core, as on a
// machine whose other work took the rest.
func (r *run) starve(p *proxyProc, busy int, d time.Duration) error {
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		r.event("no taskset (util-linux): %s not starved", p.Name)
		return nil
	}
	cpu := strconv.Itoa(runtime.NumCPU() - 1)
	pid := strconv.Itoa(p.pid())
	if out, err := r.sp.run(exec.Command(taskset, "-a", "-p", "-c", cpu, pid), time.Minute); err != nil {
		return fmt.Errorf("taskset: %v: %s", err, out)
	}
	r.event("starve %s (pid %s): %d busy processes on core %s", p.Name, pid, busy, cpu)
	var loops []*Proc
	for i := range busy {
		loop := newProc(r.sp, fmt.Sprintf("busy%d", i), func() *exec.Cmd {
			return exec.Command(taskset, "-c", cpu, "sh", "-c", "while :; do :; done")
		})
		if err := loop.Start(); err != nil {
			return err
		}
		r.cleanup(loop.Kill)
		loops = append(loops, loop)
	}
	time.Sleep(d) // the fault's length
	for _, l := range loops {
		l.Kill()
	}
	all := fmt.Sprintf("0-%d", runtime.NumCPU()-1)
	if out, err := r.sp.run(exec.Command(taskset, "-a", "-p", "-c", all, pid), time.Minute); err != nil && alive(p.pid()) {
		return fmt.Errorf("taskset: %v: %s", err, out)
	}
	r.event("%s fed again", p.Name)
	return nil
}
