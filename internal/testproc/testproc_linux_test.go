package testproc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes this test binary run one of the helpers below instead
// of its tests: a binary whose tests leak, or start a process and hang.
const helperEnv = "KOLCO_TESTPROC_HELPER"

func TestMain(m *testing.M) {
	if h := os.Getenv(helperEnv); h != "" {
		os.Exit(helper(h))
	}
	os.Exit(Main(m.Run))
}

// helper runs the helper named h, as the tests of a package would run
// under Main, and returns its exit code.
func helper(h string) int {
	sleep := func() *exec.Cmd { return exec.Command("sleep", "3600") }
	switch h {
	case "leak": // a test starts a server and forgets it
		return Main(func() int {
			cmd := sleep()
			if err := Start(cmd); err != nil {
				panic(err)
			}
			fmt.Println(cmd.Process.Pid)
			return 0
		})
	case "orphan": // a test runs a program that leaves a process behind
		return Main(func() int {
			out, err := Output(exec.Command("sh", "-c", "sleep 3600 >/dev/null 2>&1 & echo $!"))
			if err != nil {
				panic(err)
			}
			fmt.Print(string(out))
			return 0
		})
	case "clean": // a test stops what it started
		return Main(func() int {
			cmd := sleep()
			if err := Start(cmd); err != nil {
				panic(err)
			}
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return 0
		})
	case "hang", "hang-plain": // a test starts a server, then the binary is killed
		cmd := sleep()
		var err error
		if h == "hang" {
			err = Start(cmd)
		} else {
			err = cmd.Start()
		}
		if err != nil {
			panic(err)
		}
		fmt.Println(cmd.Process.Pid)
		select {}
	case "follow": // a program a test ran, following its owner
		FollowOwner()
		fmt.Println("following")
		select {}
	}
	panic("no helper " + h)
}

// runHelper runs helper h in this test binary and returns the first line
// it prints, with the command still running.
func runHelper(t *testing.T, h string, env ...string) (*exec.Cmd, string, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+h), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper %s: %v; stderr:\n%s", h, err, stderr.String())
	}
	return cmd, strings.TrimSpace(line), &stderr
}

// exitCode waits for cmd and returns its exit code.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode()
}

// running reports whether the process pid runs (exists and is no zombie).
func running(pid int) bool {
	st, err := readStat(pid)
	return err == nil && st.state != 'Z' && st.state != 'X'
}

// waitGone waits until the process pid no longer runs, reaping it if it
// became this binary's child, and reports whether it did within a minute
// (the kernel kills it at once; the minute is for a busy machine).
func waitGone(pid int) bool {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !running(pid) {
			reap(pid, syscall.WNOHANG)
			return true
		}
	}
	return false
}

// TestMainFailsOnALeak: a binary whose test leaves a process running
// exits 1, names the process and where the test started it, and kills it;
// one whose test stops what it started exits 0 and names nothing.
func TestMainFailsOnALeak(t *testing.T) {
	cmd, line, stderr := runHelper(t, "leak")
	pid, err := strconv.Atoi(line)
	if err != nil {
		t.Fatalf("helper printed %q", line)
	}
	if code := exitCode(t, cmd); code != 1 {
		t.Errorf("exit code %d, want 1; stderr:\n%s", code, stderr)
	}
	want := fmt.Sprintf("FAIL: process %d (sleep 3600), started at testproc/testproc_linux_test.go:", pid)
	if !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "is still running after the tests: killed") {
		t.Errorf("stderr:\n%s\nwant a line saying %q", stderr, want)
	}
	if running(pid) {
		t.Errorf("process %d still runs", pid)
	}

	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=clean")
	out, err := CombinedOutput(cmd)
	if err != nil || strings.Contains(string(out), "FAIL") {
		t.Errorf("a binary that stops what it started: %v\n%s", err, out)
	}
}

// TestMainFindsOrphans: a process a test's program left behind, whose
// parent has exited, is found and killed too.
func TestMainFindsOrphans(t *testing.T) {
	cmd, line, stderr := runHelper(t, "orphan")
	pid, err := strconv.Atoi(line)
	if err != nil {
		t.Fatalf("helper printed %q", line)
	}
	if code := exitCode(t, cmd); code != 1 {
		t.Errorf("exit code %d, want 1; stderr:\n%s", code, stderr)
	}
	if want := fmt.Sprintf("FAIL: process %d (sleep 3600) is still running", pid); !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr:\n%s\nwant %q", stderr, want)
	}
	if running(pid) {
		t.Errorf("process %d still runs", pid)
	}
}

// TestStartedDieWithTheBinary: a binary killed with SIGKILL - what go
// test's timeout comes to - takes the processes Start started with it;
// one started plainly outlives it, which is the leak Start prevents.
func TestStartedDieWithTheBinary(t *testing.T) {
	for _, tc := range []struct {
		helper string
		dies   bool
	}{{"hang", true}, {"hang-plain", false}} {
		t.Run(tc.helper, func(t *testing.T) {
			cmd, line, _ := runHelper(t, tc.helper)
			pid, err := strconv.Atoi(line)
			if err != nil {
				t.Fatalf("helper printed %q", line)
			}
			t.Cleanup(func() { kill(pid) }) // this binary reaps the orphan
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			if tc.dies {
				if !waitGone(pid) {
					t.Errorf("process %d outlived the binary that started it", pid)
				}
				return
			}
			// The plain start: its child is this binary's now (Main made it
			// the reaper), and runs on.
			st, err := readStat(pid)
			if err != nil || st.ppid != os.Getpid() || !running(pid) {
				t.Errorf("a process started plainly: %+v, %v; want it running, this binary's", st, err)
			}
		})
	}
}

// TestStartSurvivesItsCallersThread: a process started from a goroutine
// locked to a thread that then ends is not killed with that thread: the
// parent-death signal follows the thread that forked the child, and Start
// forks from a thread that lives as long as the process. Forked from the
// ending thread itself, the child dies with it, which is why.
func TestStartSurvivesItsCallersThread(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(*exec.Cmd) error
		lives bool
	}{
		{"Start", Start, true},
		{"forked from the thread", func(cmd *exec.Cmd) error { prepare(cmd); return cmd.Start() }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("sleep", "3600")
			errc, thread := make(chan error, 1), 0
			for thread == 0 {
				tid := make(chan int, 1)
				go func() {
					runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
					if syscall.Gettid() == os.Getpid() {
						// The main thread is never ended, only parked:
						// try again on another.
						runtime.UnlockOSThread()
						tid <- 0
						return
					}
					tid <- syscall.Gettid()
					errc <- tc.start(cmd)
				}()
				thread = <-tid
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { _ = cmd.Wait(); close(exited) }()
			t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
			task := fmt.Sprintf("/proc/self/task/%d", thread)
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(task); err != nil {
					break // the thread has ended
				}
				if time.Now().After(deadline) {
					t.Fatal("the locked goroutine's thread did not end")
				}
			}
			if !tc.lives {
				<-exited
				if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
					t.Errorf("ended %v, want killed by SIGKILL", cmd.ProcessState)
				}
				return
			}
			// The signal is sent as the thread exits, before its task is
			// gone: a child killed by it has a SIGKILL pending or is dead.
			if !running(cmd.Process.Pid) || killPending(cmd.Process.Pid) {
				t.Error("the child died with the thread of its caller")
			}
		})
	}
}

// TestFollowOwner: a program that follows its owner exits once the owner
// is gone.
func TestFollowOwner(t *testing.T) {
	owner := exec.Command("sleep", "3600")
	if err := Start(owner); err != nil {
		t.Fatal(err)
	}
	cmd, line, stderr := runHelper(t, "follow", fmt.Sprintf("%s=%d", OwnerEnv, owner.Process.Pid))
	if line != "following" {
		t.Fatalf("helper printed %q", line)
	}
	_ = owner.Process.Kill()
	_ = owner.Wait()
	if code := exitCode(t, cmd); code != 2 || !strings.Contains(stderr.String(), "is gone: exiting") {
		t.Errorf("exit code %d, stderr %q: want 2, saying its owner is gone", code, stderr)
	}
}

// TestGone: an orphan the reaper took in is running, then - killed - gone,
// and reaped: where signal 0 would find its zombie for ever.
func TestGone(t *testing.T) {
	out, err := Output(exec.Command("sh", "-c", "sleep 3600 >/dev/null 2>&1 & echo $!"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("sh printed %q", out)
	}
	if Gone(pid) {
		t.Fatal("a running orphan is gone")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !Gone(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the killed orphan is not gone")
		}
	}
	if _, err := readStat(pid); err == nil {
		t.Error("the orphan's zombie was not reaped")
	}
}

// TestKillOwnSparesOthers: a pid that runs another executable - a server
// that took the pid of a program a test once read from a pid file - gets
// no signal from KillOwn, and a Proc taken of a process that has ended
// sends none either.
func TestKillOwnSparesOthers(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if err := KillOwn(cmd.Process.Pid, syscall.SIGKILL); err != os.ErrProcessDone {
		t.Errorf("KillOwn of another executable: %v, want os.ErrProcessDone", err)
	}
	if Gone(cmd.Process.Pid) {
		t.Fatal("KillOwn killed a process of another executable")
	}
	p := Of(cmd.Process.Pid)
	if err := p.Signal(0); err != nil {
		t.Errorf("signal 0 to a running process: %v", err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if err := p.Signal(syscall.SIGKILL); err != os.ErrProcessDone {
		t.Errorf("a Proc of an ended process: %v, want os.ErrProcessDone", err)
	}
}
