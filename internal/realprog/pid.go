package realprog

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/resp"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// A port FreePorts returns is free when it is chosen, not when the
// program binds it: another program, or an outgoing connection's local
// port, may take it between. The program then fails to bind and exits,
// while the port answers - for the other one. These ask the server at an
// address for its process ID, so that a test knows the server it talks to
// is the one it started.

// RedisPID returns the process ID of the redis-server or redis-sentinel
// at addr (INFO server's process_id).
func RedisPID(addr string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := resp.Dial(ctx, addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	v, err := c.Do("INFO", "server")
	if err != nil {
		// A server that wants a password says so: it is not the one a
		// test started without, nor can it tell.
		return 0, err
	}
	for line := range strings.SplitSeq(v.Str, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			return strconv.Atoi(rest)
		}
	}
	return 0, fmt.Errorf("%s: no process_id in INFO server", addr)
}

// MemcachedPID returns the process ID of the memcached at addr (stats'
// pid).
func MemcachedPID(addr string) (int, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("stats\r\n")); err != nil {
		return 0, err
	}
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, err
		}
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "STAT pid "); ok {
			return strconv.Atoi(rest)
		}
		if line == "END" {
			return 0, fmt.Errorf("%s: no pid in stats", addr)
		}
	}
}

// Started is a program StartOwned started.
type Started struct {
	Cmd    *exec.Cmd
	Port   int
	Args   []string // what args returned for Port
	Exited <-chan struct{}
}

// StartOwned starts bin with args(port) on a free port, waits until it
// listens, and checks with pid that the server answering there is this
// process; when another program took the port first it tries another, up
// to five times. Cleanup kills it. A pid that cannot tell (an error) is
// taken as yes.
func StartOwned(t testing.TB, what, bin string, args func(port int) []string, pid func(addr string) (int, error)) Started {
	t.Helper()
	for attempt := 0; ; attempt++ {
		port := FreePorts(t, 1)[0]
		argv := args(port)
		cmd := exec.Command(bin, argv...)
		if err := testproc.Start(cmd); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		kill := func() { _ = cmd.Process.Kill(); <-exited }
		WaitListening(t, what, []int{port}, exited)
		got, err := pid(fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil || got == cmd.Process.Pid || attempt == 4 {
			t.Cleanup(kill)
			return Started{Cmd: cmd, Port: port, Args: argv, Exited: exited}
		}
		kill()
	}
}
