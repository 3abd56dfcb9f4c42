package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"
)

// readyEnv tells a process started by daemonize or handover that the
// descriptor it names is where to say whether it serves.
const readyEnv = "KOLCO_READY_FD"

// daemonize runs the proxy in the background, as nutcracker -d does. A Go
// program cannot fork without exec, so it starts itself again, detached:
// in a session of its own (setsid), in /, with stdin, stdout and stderr on
// /dev/null (logs go to -o), and with a pipe on which the new process says
// whether it serves. This process waits for that word and exits 0 once the
// daemon serves (its pid is in the pid file by then), or 1 with the
// daemon's error.
func daemonize(f *proxyFlags, fl *pflag.FlagSet) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	dargs, err := daemonArgs(f, fl)
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	args := append([]string{os.Args[0]}, dargs...) // argv[0] as given: "nutcracker" stays nutcracker
	cmd := &exec.Cmd{Path: exe, Args: args, Dir: "/", Stdin: null, Stdout: null, Stderr: null,
		ExtraFiles: []*os.File{w}, Env: append(environ(), readyEnv+"=3"),
		SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return err
	}
	word := readWord(r, 0)
	switch {
	case word == "ready":
		return cmd.Process.Release()
	case word == "":
		_ = cmd.Wait()
		return fmt.Errorf("the daemon exited while starting: %v", cmd.ProcessState)
	}
	_ = cmd.Wait()
	return errors.New(word)
}

// daemonArgs returns the command line of the daemon: the flags given,
// with the files' paths made absolute (the daemon runs in /), without -d
// (the daemon is told by its environment that it is one).
func daemonArgs(f *proxyFlags, fl *pflag.FlagSet) ([]string, error) {
	var args []string
	if !f.nutcracker {
		args = append(args, "proxy")
	}
	var err error
	fl.Visit(func(flag *pflag.Flag) {
		v := flag.Value.String()
		switch flag.Name {
		case "daemonize":
			return
		case "config", "conf-file", "output", "pid-file":
			if v, err = filepath.Abs(v); err != nil {
				return
			}
		}
		args = append(args, "--"+flag.Name+"="+v)
	})
	if f.nutcracker && !fl.Changed("config") && !fl.Changed("conf-file") {
		args = append(args, "--conf-file="+f.config)
	}
	return args, err
}

// readyPipe returns, in a process started by daemonize or handover, the
// function that tells the waiting process whether the proxy serves (a nil
// error) or why it does not; nil otherwise. It tells once.
func readyPipe() func(error) {
	fd, err := strconv.Atoi(os.Getenv(readyEnv))
	os.Unsetenv(readyEnv) // not for the processes this one starts
	if err != nil {
		return nil
	}
	pipe := os.NewFile(uintptr(fd), "daemon-ready")
	var once sync.Once
	return func(err error) {
		once.Do(func() {
			if err == nil {
				fmt.Fprintln(pipe, "ready")
			} else {
				fmt.Fprintln(pipe, strings.ReplaceAll(err.Error(), "\n", " "))
			}
			pipe.Close()
		})
	}
}

// readWord reads the word a started process says on r: "ready", or why
// it could not start; empty when it exited without a word, or when
// timeout (if not zero) passed first.
func readWord(r *os.File, timeout time.Duration) string {
	if timeout > 0 {
		_ = r.SetReadDeadline(time.Now().Add(timeout))
	}
	word, _ := bufio.NewReader(r).ReadString('\n')
	return strings.TrimSpace(word)
}

// environ returns the environment for a process this one starts, without
// what was meant for this one alone.
func environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, readyEnv+"=") && !strings.HasPrefix(kv, listenFDsEnv+"=") {
			env = append(env, kv)
		}
	}
	return env
}

// writePidFile writes the process's pid to path; removePidFile removes it
// if it still holds this pid.
func writePidFile(path string) error {
	return os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
}

func removePidFile(path string) {
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(os.Getpid()) {
		os.Remove(path)
	}
}
