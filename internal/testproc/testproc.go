// Package testproc starts the programs tests run - servers, Sentinels,
// etcd, proxies, browsers - so that none outlives the test binary that
// started it, and checks, once a package's tests have run, that none is
// still running. It is for tests only.
//
// A test that starts a server stops it in its Cleanup, but a Cleanup
// never runs when the binary dies first: go test's -timeout makes it
// panic, an operator's ^C or the CI's kill ends it, and the servers it
// started go on, children of init, holding their ports. Start guards
// against that: on Linux each program is started with a parent-death
// signal (SIGKILL), so that the kernel kills it when the test binary
// dies, however it dies. [Main] guards against the other leak, a test
// that forgets to stop what it started: run from TestMain, it fails the
// binary when a process it started (or one of theirs, orphaned) is still
// running after the tests, names it, and kills it.
package testproc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// OwnerEnv names the environment variable that holds the process ID of
// the test binary running [Main], for its descendants: a test binary run
// again as a program reads it in [FollowOwner].
const OwnerEnv = "KOLCO_TESTPROC_OWNER"

// Start starts cmd as exec.Cmd.Start does, so that it dies with the test
// binary (see the package doc), and notes it for [Main]'s report.
//
// The parent-death signal is sent when the thread that forked the child
// exits, not the process (prctl(2), PR_SET_PDEATHSIG): the "parent" is
// the thread. Go runs goroutines on threads it may end - one that a
// goroutine locked with runtime.LockOSThread and left locked is ended
// when that goroutine returns - so a child forked from such a thread
// would be killed in the middle of its test. Start therefore forks every
// child from one goroutine that locks its thread and never returns: that
// thread lives exactly as long as the process, and the signal comes when
// the process ends, not before.
func Start(cmd *exec.Cmd) error {
	prepare(cmd)
	done := make(chan error, 1)
	startSpawner()
	spawns <- spawn{cmd: cmd, done: done}
	if err := <-done; err != nil {
		return err
	}
	note(cmd)
	return nil
}

// Run starts cmd with [Start] and waits for it, as exec.Cmd.Run does.
func Run(cmd *exec.Cmd) error {
	if err := Start(cmd); err != nil {
		return err
	}
	return cmd.Wait()
}

// Output runs cmd with [Run] and returns its standard output, as
// exec.Cmd.Output does: an *exec.ExitError holds its standard error when
// cmd.Stderr was not set.
func Output(cmd *exec.Cmd) ([]byte, error) {
	if cmd.Stdout != nil {
		return nil, errors.New("testproc: Stdout already set")
	}
	var out, errOut bytes.Buffer
	cmd.Stdout = &out
	captured := cmd.Stderr == nil
	if captured {
		cmd.Stderr = &errOut
	}
	err := Run(cmd)
	var ee *exec.ExitError
	if captured && errors.As(err, &ee) {
		ee.Stderr = errOut.Bytes()
	}
	return out.Bytes(), err
}

// CombinedOutput runs cmd with [Run] and returns its standard output and
// standard error together, as exec.Cmd.CombinedOutput does.
func CombinedOutput(cmd *exec.Cmd) ([]byte, error) {
	if cmd.Stdout != nil || cmd.Stderr != nil {
		return nil, errors.New("testproc: Stdout or Stderr already set")
	}
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := Run(cmd)
	return b.Bytes(), err
}

// spawn is a request to the spawner: start cmd, say how it went on done.
type spawn struct {
	cmd  *exec.Cmd
	done chan<- error
}

var (
	spawnOnce sync.Once
	spawns    chan spawn
)

// startSpawner starts the spawner, once.
func startSpawner() {
	spawnOnce.Do(func() {
		spawns = make(chan spawn)
		go spawner(spawns)
	})
}

// spawner starts every child, from a thread it keeps until the process
// ends (see Start). It never returns.
func spawner(reqs <-chan spawn) {
	runtime.LockOSThread()
	for r := range reqs {
		r.done <- r.cmd.Start()
	}
}

// started are the processes Start started, by process ID, with where.
var started struct {
	mu   sync.Mutex
	byID map[int]string
}

// note records cmd's process, and the test file and line that started it,
// for Main's report.
func note(cmd *exec.Cmd) {
	where := ""
	for skip := 2; skip < 12; skip++ {
		_, file, line, ok := runtime.Caller(skip)
		if !ok {
			break
		}
		if ours := strings.Contains(file, "/internal/testproc/") && !strings.HasSuffix(file, "_test.go"); !ours {
			where = fmt.Sprintf("%s:%d", shortPath(file), line)
			break
		}
	}
	started.mu.Lock()
	defer started.mu.Unlock()
	if started.byID == nil {
		started.byID = map[int]string{}
	}
	started.byID[cmd.Process.Pid] = where
}

// startedAt returns where the process pid was started, if Start started it.
func startedAt(pid int) string {
	started.mu.Lock()
	defer started.mu.Unlock()
	return started.byID[pid]
}

// shortPath returns the last two elements of a file path: the package's
// directory and the file.
func shortPath(p string) string {
	parts := strings.Split(p, "/")
	return strings.Join(parts[max(0, len(parts)-2):], "/")
}

// Main runs a package's tests (run is m.Run, or what runs it) and returns
// the exit code for os.Exit: run's, or 1 when a process the tests started
// is still running after them. Each such process is named, with the test
// file and line that started it when [Start] did, on standard error, and
// killed. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testproc.Main(m.Run)) }
//
// On Linux the binary is made the reaper of its orphaned descendants
// (PR_SET_CHILD_SUBREAPER), so that a process started by a program a test
// ran - a daemon, a proxy's successor, a browser's helper - is found too
// once its parent has gone.
func Main(run func() int) int {
	if err := becomeReaper(); err != nil {
		fmt.Fprintf(os.Stderr, "testproc: %v; orphaned processes are not checked\n", err)
	}
	_ = os.Setenv(OwnerEnv, strconv.Itoa(os.Getpid()))
	// Started before the tests, so that a test counting its goroutines
	// does not count the spawner as its own.
	startSpawner()
	code := run()
	left, err := leftovers()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testproc: cannot list the processes left: %v\n", err)
		return max(code, 1)
	}
	if len(left) == 0 {
		return code
	}
	slices.SortFunc(left, func(a, b leftover) int { return a.pid - b.pid })
	for _, l := range left {
		where := ""
		if at := startedAt(l.pid); at != "" {
			where = ", started at " + at
		}
		fmt.Fprintf(os.Stderr, "FAIL: process %d (%s)%s is still running after the tests: killed\n", l.pid, l.cmdline, where)
		kill(l.pid)
	}
	return max(code, 1)
}

// leftover is a process still running after the tests.
type leftover struct {
	pid     int
	cmdline string
}
