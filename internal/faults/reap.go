package faults

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// A proxy's handover (SIGUSR2) starts the next process from the proxy
// itself, which then exits: the new process is the run's grandchild, then
// an orphan, and no parent-death signal of the run's reaches it. So each
// proxy runs under a reaper: the test binary itself, started with
// reaperEnv, a child subreaper (prctl PR_SET_CHILD_SUBREAPER) that starts
// the proxy and becomes the parent of every process the proxy's handovers
// leave behind. Its own parent-death signal is SIGTERM: when the run's
// thread ends, it kills every process it holds, then exits. It also exits
// once it holds none.
const reaperEnv = "KOLCO_FAULTS_REAPER"

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER.
const prSetChildSubreaper = 36

// Reap runs the reaper when the process was started as one, and never
// returns then; otherwise it returns at once. The test binary that drives
// Run calls it first thing in TestMain, with Env.Reaper set.
func Reap() {
	if os.Getenv(reaperEnv) != "1" {
		return
	}
	os.Unsetenv(reaperEnv)
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "faults reaper: no command")
		os.Exit(2)
	}
	// The proxy's parent-death signal fires when this thread exits: never,
	// but with the process.
	runtime.LockOSThread()
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		fmt.Fprintln(os.Stderr, "faults reaper: PR_SET_CHILD_SUBREAPER:", errno)
		os.Exit(1)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "faults reaper:", err)
		os.Exit(1)
	}
	go func() {
		<-term
		for kids := children(); len(kids) > 0; kids = children() {
			for _, pid := range kids {
				_ = syscall.Kill(pid, syscall.SIGCONT)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(-1, &ws, 0, nil)
		}
		os.Exit(1)
	}()
	// Reap the proxy and every orphan handed to this process, until none
	// is left.
	for {
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(-1, &ws, 0, nil); err == syscall.ECHILD {
			os.Exit(0)
		}
	}
}

// children returns the process IDs of this process's children.
func children() []int {
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	var out []int
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for f := range strings.FieldsSeq(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// reaped returns cmd run under a reaper (see Reap).
func reaped(cmd *exec.Cmd) *exec.Cmd {
	self, err := os.Executable()
	if err != nil {
		return cmd
	}
	r := exec.Command(self, append([]string{cmd.Path}, cmd.Args[1:]...)...)
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	r.Env = append(env, reaperEnv+"=1")
	r.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	return r
}
