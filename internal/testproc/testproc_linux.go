package testproc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// prepare sets cmd's parent-death signal to SIGKILL, beside whatever
// else its SysProcAttr asks for.
func prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// becomeReaper makes this process the parent of its orphaned descendants.
func becomeReaper() error {
	const prSetChildSubreaper = 36 // linux/prctl.h
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", errno)
	}
	return nil
}

// leftovers returns this process's children that are still running. A
// child that has exited and was not waited for is reaped, and one that
// is being killed (SIGKILL pending) is waited for: neither is running.
func leftovers() ([]leftover, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var out []leftover
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.ppid != self {
			continue // gone meanwhile, or not ours
		}
		switch {
		case st.state == 'Z' || st.state == 'X':
			reap(pid, syscall.WNOHANG)
		case killPending(pid):
			reap(pid, 0)
		default:
			out = append(out, leftover{pid: pid, cmdline: cmdline(pid)})
		}
	}
	return out, nil
}

// procStat is what leftovers reads of /proc/PID/stat.
type procStat struct {
	state byte
	ppid  int
}

// readStat reads a process's state and parent from /proc/PID/stat, whose
// second field, the command name in parentheses, may hold any byte: the
// fields after it follow its last ')'.
func readStat(pid int) (procStat, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, errors.New("no command name in stat")
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 2 || len(fields[0]) != 1 {
		return procStat{}, errors.New("short stat")
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return procStat{}, err
	}
	return procStat{state: fields[0][0], ppid: ppid}, nil
}

// killPending reports whether a SIGKILL awaits delivery to the process:
// it is being killed, and will not run again.
func killPending(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || name != "SigPnd" && name != "ShdPnd" {
			continue
		}
		mask, err := strconv.ParseUint(strings.TrimSpace(value), 16, 64)
		if err == nil && mask&(1<<(uint(syscall.SIGKILL)-1)) != 0 {
			return true
		}
	}
	return false
}

// cmdline returns a process's command line, its arguments separated by
// spaces, or its command name when it has none (a kernel thread, a
// zombie).
func cmdline(pid int) string {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err == nil && len(data) > 0 {
		return strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " "))
	}
	comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	return strings.TrimSpace(string(comm))
}

// kill kills the child pid and waits for it.
func kill(pid int) {
	_ = syscall.Kill(pid, syscall.SIGKILL)
	reap(pid, 0)
}

// reap waits for the child pid with options (WNOHANG, or 0 to block).
func reap(pid, options int) {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, options, nil)
		if !errors.Is(err, syscall.EINTR) {
			return
		}
	}
}

func gone(pid int) bool {
	st, err := readStat(pid)
	if err != nil {
		return true
	}
	if st.state != 'Z' && st.state != 'X' {
		return false
	}
	started.mu.Lock()
	_, ours := started.byID[pid]
	started.mu.Unlock()
	if st.ppid == os.Getpid() && !ours {
		reap(pid, syscall.WNOHANG)
	}
	return true
}

// startTime returns when the process pid started (its stat's 22nd field,
// in clock ticks since boot), or "" when there is no such process.
func startTime(pid int) string {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(data[i+1:])) // from the state, the 3rd field
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// runsThisExecutable reports whether the process pid runs the executable
// this process runs.
func runsThisExecutable(pid int) bool {
	self, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return false
	}
	exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	return err == nil && exe == self
}
