package main

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

// dumpCore does what nutcracker does with a SIGSEGV sent to it (nc_signal.c:
// a stack trace, "signal 11 (SIGSEGV) received, core dumping", then the
// signal again with its default action): it logs the signal in those
// words, whatever the level, and every goroutine's stack after it, where
// the log goes - a daemon's stderr goes nowhere - and dies of SIGSEGV, so
// that the system keeps a core file where it keeps them and whatever
// waits for the process (systemd, a shell's $?, 139) sees it killed by
// the signal, as nutcracker is. Go would otherwise print its own trace to
// stderr alone and exit 2. It does not return.
func dumpCore(logs *proxyLogs, sig os.Signal) {
	logSignal(logs, sig, "core dumping")
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	_, _ = fmt.Fprintf(logs.out, "goroutines at SIGSEGV:\n%s\n", buf)
	dieOf(syscall.SIGSEGV)
	// The signal is on its way; should it not come, die as near to it as
	// a process can say.
	time.Sleep(time.Second)
	os.Exit(128 + int(syscall.SIGSEGV))
}
