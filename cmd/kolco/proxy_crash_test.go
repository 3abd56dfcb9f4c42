package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// TestSegvAsNutcracker: a SIGSEGV sent with kill makes the real nutcracker
// and kolco installed as nutcracker log "signal 11 (SIGSEGV) received,
// core dumping" and die of the signal. kolco's log said nothing, and it
// exited 2 with Go's trace on stderr. (No core is written: the test's
// core size limit is 0.)
func TestSegvAsNutcracker(t *testing.T) {
	ncBin := realprog.Binary(t, "nutcracker", "nutcracker")
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CORE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = 0 // the programs inherit it: no core files from this test
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &lim); err != nil {
		t.Fatal(err)
	}
	for _, prog := range []string{"nutcracker (the real one)", "nutcracker"} {
		t.Run(prog, func(t *testing.T) {
			conf, listen, _ := unitFileConfig(t)
			logPath := filepath.Join(t.TempDir(), "nutcracker.log")
			args := []string{"-c", conf, "-s", strconv.Itoa(realprog.FreePorts(t, 1)[0]), "-a", "127.0.0.1", "-o", logPath}
			cmd := program(t, "nutcracker", args...)
			if prog != "nutcracker" {
				cmd = exec.Command(ncBin, args...)
			}
			exited, waitErr := startProgram(t, cmd, prog, listen)
			if err := cmd.Process.Signal(syscall.SIGSEGV); err != nil {
				t.Fatal(err)
			}
			<-exited
			var ee *exec.ExitError
			if !errors.As(*waitErr, &ee) {
				t.Fatalf("after SIGSEGV: %v, want killed by it", *waitErr)
			}
			if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGSEGV {
				t.Errorf("after SIGSEGV: %v, want killed by it", *waitErr)
			}
			b, _ := os.ReadFile(logPath)
			if !strings.Contains(string(b), "signal 11 (SIGSEGV) received, core dumping") {
				t.Errorf("the log lacks the signal:\n%s", b)
			}
		})
	}
}
