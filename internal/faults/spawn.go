package faults

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// spawner starts every process of a run from one goroutine locked to its
// OS thread, with SysProcAttr.Pdeathsig set. Linux sends a process its
// parent-death signal when the thread that created it exits, not the
// process: a process started from whichever thread the scheduler gave the
// calling goroutine would be killed when the runtime retires that thread,
// and one started from a thread that lives as long as the test binary
// would outlive a run that ended. This thread lives exactly as long as
// the run: Close ends it, and so does the test binary's exit, a panic or
// a kill -9 - each of which kills every process started here.
type spawner struct {
	logf   func(format string, args ...any) // where a process that outlives its kill is reported
	reqs   chan spawnReq
	stop   chan struct{}
	done   chan struct{}
	locked chan struct{} // closed once loop runs locked to a thread it may end
}

type spawnReq struct {
	cmd *exec.Cmd
	err chan<- error
}

func newSpawner() *spawner {
	s := &spawner{logf: func(string, ...any) {}, reqs: make(chan spawnReq), stop: make(chan struct{}), done: make(chan struct{}), locked: make(chan struct{})}
	go s.loop()
	return s
}

func (s *spawner) loop() {
	// Never unlocked: when loop returns, the runtime ends the thread, and
	// the kernel sends every process it started its Pdeathsig.
	runtime.LockOSThread()
	if syscall.Gettid() == syscall.Getpid() {
		// The main thread, which the runtime never ends: processes
		// started from it would outlive the run. Holding it, start
		// another goroutine, which therefore locks another thread, and
		// let the main thread go once it has.
		go s.loop()
		<-s.locked
		runtime.UnlockOSThread()
		return
	}
	close(s.locked)
	defer close(s.done)
	for {
		select {
		case r := <-s.reqs:
			r.err <- r.cmd.Start()
		case <-s.stop:
			return
		}
	}
}

// start starts cmd on the spawner's thread, to die with it.
func (s *spawner) start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if cmd.SysProcAttr.Pdeathsig == 0 { // a reaper's is SIGTERM (see Reap)
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	errc := make(chan error, 1)
	select {
	case s.reqs <- spawnReq{cmd: cmd, err: errc}:
	case <-s.done:
		return errors.New("faults: the run is over")
	}
	return <-errc
}

// close ends the spawner's thread, which kills what it started.
func (s *spawner) close() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

// run runs cmd to its end on the spawner's thread, for at most timeout,
// and returns its combined output.
func (s *spawner) run(cmd *exec.Cmd, timeout time.Duration) (string, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := s.start(cmd); err != nil {
		return "", err
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		return out.String(), err
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-waited
		return out.String(), fmt.Errorf("%s: no end after %v", cmd.Path, timeout)
	}
}

// Proc is a long-running process of a run: a server, a Sentinel, etcd, a
// proxy, a sidecar, a busy loop. It can be stopped, continued, killed and
// started again with the command its command function builds.
type Proc struct {
	Name    string
	command func() *exec.Cmd
	sp      *spawner

	mu      sync.Mutex // guards cmd, exited, stopped
	cmd     *exec.Cmd
	exited  chan struct{}
	stopped bool
	out     *tail
}

func newProc(sp *spawner, name string, command func() *exec.Cmd) *Proc {
	return &Proc{Name: name, command: command, sp: sp, out: &tail{}}
}

// Start starts the process; an error when it is running.
func (p *Proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		select {
		case <-p.exited:
		default:
			return fmt.Errorf("%s: already running", p.Name)
		}
	}
	cmd := p.command()
	cmd.Stdout, cmd.Stderr = p.out, p.out
	// A process the command started and left behind (a proxy's
	// handover) may hold the output pipe after the command has exited.
	cmd.WaitDelay = outputWait
	if err := p.sp.start(cmd); err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.cmd, p.exited, p.stopped = cmd, exited, false
	return nil
}

// Pid is the process's ID, 0 when it never started.
func (p *Proc) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Exited is closed when the process started last has exited.
func (p *Proc) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return p.exited
}

// Running reports whether the process started last is still running.
func (p *Proc) Running() bool {
	select {
	case <-p.Exited():
		return false
	default:
		return true
	}
}

// Signal sends sig to the process, keeping track of SIGSTOP and SIGCONT.
func (p *Proc) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return fmt.Errorf("%s: not started", p.Name)
	}
	switch sig {
	case syscall.SIGSTOP:
		p.stopped = true
	case syscall.SIGCONT:
		p.stopped = false
	}
	return p.cmd.Process.Signal(sig)
}

// outputWait bounds how long a process's exit waits for the processes it
// left behind to close its output.
const outputWait = 5 * time.Second

// killWait bounds Kill's wait for a killed process's end: one that has
// not ended by then is in the kernel for good (uninterruptible), which a
// run reports and leaves rather than hang on it.
const killWait = time.Minute

// Kill kills the process (kill -9, after a SIGCONT so that a stopped one
// dies at once) and waits until it has exited, a minute at most: one
// still there then is reported, with each thread's state and kernel
// stack.
func (p *Proc) Kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.stopped = false
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Kill()
	select {
	case <-exited:
	case <-time.After(killWait):
		p.sp.logf("%s: process %d not ended %v after kill -9:\n%s", p.Name, cmd.Process.Pid, killWait, threads(cmd.Process.Pid))
	}
}

// threads describes each thread of process pid: its state, wait channel
// and kernel stack (readable by root only).
func threads(pid int) string {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tids, err := os.ReadDir(dir)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, tid := range tids {
		read := func(name string) string {
			data, err := os.ReadFile(filepath.Join(dir, tid.Name(), name))
			if err != nil {
				return err.Error()
			}
			return strings.TrimSpace(string(data))
		}
		fmt.Fprintf(&b, "thread %s: stat %s; wchan %s\n%s\n", tid.Name(), read("stat"), read("wchan"), read("stack"))
	}
	return b.String()
}

// Output is the end of what the process wrote on its standard output and
// error, over all its starts.
func (p *Proc) Output() string { return p.out.String() }

// tail keeps the last tailSize bytes written to it.
type tail struct {
	mu sync.Mutex
	b  []byte
}

// tailSize holds a proxy's goroutines, dumped when it hangs (dumpGoroutines).
const tailSize = 1 << 20

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > tailSize {
		t.b = append(t.b[:0], t.b[len(t.b)-tailSize:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
