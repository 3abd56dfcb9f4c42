//go:build !linux

package testproc

import (
	"os/exec"
	"syscall"
)

// On systems other than Linux there is no parent-death signal and no
// child reaper: the programs are started plainly, and Main checks
// nothing.

func prepare(*exec.Cmd) {}

func becomeReaper() error { return nil }

func leftovers() ([]leftover, error) { return nil, nil }

func kill(int) {}

func gone(pid int) bool { return syscall.Kill(pid, 0) != nil }

// startTime is "0" for a process that exists: elsewhere than Linux a pid
// is not told apart from its next owner.
func startTime(pid int) string {
	if syscall.Kill(pid, 0) != nil {
		return ""
	}
	return "0"
}

// runsThisExecutable is true for a process that exists: elsewhere than
// Linux the executable is not asked.
func runsThisExecutable(pid int) bool { return syscall.Kill(pid, 0) == nil }
