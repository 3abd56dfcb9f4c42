package testproc

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// ownerCheckEvery is how often FollowOwner looks for the test binary.
const ownerCheckEvery = 200 * time.Millisecond

// FollowOwner makes a test binary run again as a program - as the kolco
// command, a peer, a helper process - exit once the test binary that runs
// [Main] above it is gone. [Start] has the kernel kill the programs a
// test starts itself when the binary dies; what those programs start in
// turn (a proxy's successor on SIGUSR2, a daemon) has no such signal, and
// would go on. FollowOwner does nothing when the environment names no
// owner (see [OwnerEnv]).
func FollowOwner() {
	owner, err := strconv.Atoi(os.Getenv(OwnerEnv))
	if err != nil || owner <= 0 || owner == os.Getpid() {
		return
	}
	go func() {
		for {
			time.Sleep(ownerCheckEvery) // a watch for a death no call can wait for: not a test's synchronisation
			if err := syscall.Kill(owner, 0); errors.Is(err, syscall.ESRCH) {
				fmt.Fprintf(os.Stderr, "testproc: the test binary (process %d) is gone: exiting\n", owner)
				os.Exit(2)
			}
		}
	}()
}

// Gone reports whether the process pid has exited: there is no such
// process, or it is a zombie. A zombie that is this process's child and
// that [Start] did not start - a program's child orphaned and taken in by
// [Main]'s reaper, such as a proxy's successor after a handover - is
// reaped, since no exec.Cmd will wait for it. Tests that wait for such a
// process to end ask Gone rather than signal 0, which succeeds on a
// zombie.
func Gone(pid int) bool { return gone(pid) }

// Proc is a process named by its pid and the moment it started, so that a
// signal sent through it never reaches another process that took the pid
// after it ended: the kernel hands pids out again (pid_max is often
// 32768), and a test run starts thousands of servers, so a late signal to
// a pid a test once read - a daemon's or a handover's successor's, from a
// pid file - can kill another test's server.
type Proc struct {
	pid   int
	start string
}

// Of returns the process pid as it is now; call it while it runs.
func Of(pid int) Proc { return Proc{pid: pid, start: startTime(pid)} }

// Pid returns the process's pid.
func (p Proc) Pid() int { return p.pid }

// Signal sends sig to the process, unless it has ended and its pid is
// free or another's: then it returns os.ErrProcessDone.
func (p Proc) Signal(sig syscall.Signal) error {
	if p.pid <= 0 || startTime(p.pid) != p.start {
		return os.ErrProcessDone
	}
	return syscall.Kill(p.pid, sig)
}

// KillOwn sends sig to pid if it runs this very executable - a program a
// test started by running its test binary again (a proxy, a daemon, a
// handover's successor) - and returns os.ErrProcessDone otherwise: a pid
// read from a pid file may have ended and been handed to another test's
// server since.
func KillOwn(pid int, sig syscall.Signal) error {
	if pid <= 0 || !runsThisExecutable(pid) {
		return os.ErrProcessDone
	}
	return syscall.Kill(pid, sig)
}
