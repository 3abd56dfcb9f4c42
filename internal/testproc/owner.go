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
