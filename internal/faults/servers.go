package faults

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/resp"
)

// Server is a memcached or redis-server of a run.
type Server struct {
	// Name is the name the pool places it by.
	Name  string
	Proc  *Proc
	Port  int
	Redis bool
	// Relay is the link between the proxies and the server; nil for a
	// Sentinel shard's, whose addresses the Sentinels give.
	Relay *Relay
	dir   string // a redis-server's data (its append-only file)
	// replicaOf says, when the server starts, the primary it is to
	// replicate: "" for none.
	replicaOf func(*Server) string
}

// Addr is where the proxies reach the server: its relay when it has one.
func (s *Server) Addr() string {
	if s.Relay != nil {
		return s.Relay.Addr
	}
	return s.Direct()
}

// Direct is where the server listens.
func (s *Server) Direct() string { return fmt.Sprintf("127.0.0.1:%d", s.Port) }

// binaries are the programs a run needs, found on PATH.
type binaries struct {
	memcached, redis, sentinel, etcd string
}

// dataDir returns a new directory for a server's data: on /dev/shm where
// there is one, so that the append-only file's fsync on every write
// (appendfsync always: a kill -9 must lose no acknowledged write) costs
// nothing, else under dir.
func dataDir(dir, name string) (string, error) {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return os.MkdirTemp("/dev/shm", "kolco-faults-"+name+"-")
	}
	d := filepath.Join(dir, name)
	return d, os.MkdirAll(d, 0o700)
}

// startServer starts a memcached, or a redis-server with an append-only
// file synced on every write (a replica of what replicaOf says, when it
// is given), on a free port, and waits until it answers as itself.
func (r *run) startServer(name string, redis bool, replicaOf func(*Server) string) (*Server, error) {
	s := &Server{Name: name, Redis: redis, replicaOf: replicaOf}
	if redis {
		d, err := dataDir(r.dir, name)
		if err != nil {
			return nil, err
		}
		r.cleanup(func() { os.RemoveAll(d) })
		s.dir = d
	}
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		s.Port = realprog.RestartablePorts(r.t, 1)[0]
		s.Proc = newProc(r.sp, name, func() *exec.Cmd { return s.command(r.bins) })
		if err = s.Proc.Start(); err != nil {
			return nil, err
		}
		r.cleanup(s.Proc.Kill)
		if err = s.waitOwned(10 * time.Second); err == nil {
			break
		}
		s.Proc.Kill()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", name, err, s.Proc.Output())
	}
	return s, nil
}

// command is the server's command line.
func (s *Server) command(b binaries) *exec.Cmd {
	port := strconv.Itoa(s.Port)
	if !s.Redis {
		args := []string{"-l", "127.0.0.1", "-p", port, "-U", "0", "-m", "64", "-t", "1"}
		if os.Geteuid() == 0 {
			args = append(args, "-u", "root") // memcached refuses to run as root otherwise
		}
		return exec.Command(b.memcached, args...)
	}
	args := []string{"--port", port, "--bind", "127.0.0.1", "--dir", s.dir, "--save", "",
		"--appendonly", "yes", "--appendfsync", "always", "--repl-diskless-sync-delay", "0"}
	if s.replicaOf != nil {
		if primary := s.replicaOf(s); primary != "" {
			host, pport, _ := net.SplitHostPort(primary)
			args = append(args, "--replicaof", host, pport)
		}
	}
	return exec.Command(b.redis, args...)
}

// waitOwned waits until the server answers on its port as the process
// started last: another program may have taken a free port first.
func (s *Server) waitOwned(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var pid int
		var err error
		if s.Redis {
			pid, err = realprog.RedisPID(s.Direct())
		} else {
			pid, err = realprog.MemcachedPID(s.Direct())
		}
		if err == nil {
			if pid != s.Proc.Pid() {
				return fmt.Errorf("port %d answers as process %d, not %d", s.Port, pid, s.Proc.Pid())
			}
			return nil
		}
		if !s.Proc.Running() {
			return fmt.Errorf("exited while starting")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not answering after %v: %w", timeout, err)
		}
		time.Sleep(20 * time.Millisecond) // polling for readiness, not ordering
	}
}

// Restart starts a killed server again on its port: with its data (a
// redis-server's append-only file), or empty.
func (s *Server) Restart(empty bool) error {
	if empty && s.dir != "" {
		entries, _ := os.ReadDir(s.dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "appendonly") || strings.HasSuffix(e.Name(), ".rdb") {
				os.RemoveAll(filepath.Join(s.dir, e.Name()))
			}
		}
	}
	var err error
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if err = s.Proc.Start(); err != nil {
			return err
		}
		if err = s.waitOwned(10 * time.Second); err == nil {
			return nil
		}
		// The port was taken meanwhile, or the server is still loading:
		// a redis-server answers -LOADING to INFO until it has read its
		// file, which waitOwned takes for an answer.
		s.Proc.Kill()
		time.Sleep(200 * time.Millisecond) // the port freed by a connection in TIME_WAIT elsewhere
	}
	return fmt.Errorf("%s: no restart on port %d: %w\n%s", s.Name, s.Port, err, s.Proc.Output())
}

// redisDo runs one command on addr, for at most two seconds stretched by
// how busy the machine is (realprog.Busy): seed 1386, run beside other
// work at load 45-69, failed on a CLIENT PAUSE unanswered in 2 s, and
// passed replayed at a lower load.
func redisDo(addr string, args ...string) (resp.Value, error) {
	wait := time.Duration(realprog.Busy() * float64(2*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c, err := resp.Dial(ctx, addr)
	if err != nil {
		return resp.Value{}, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(wait))
	return c.Do(args...)
}

// infoField returns a field of a redis-server's INFO section.
func infoField(addr, section, field string) (string, error) {
	v, err := redisDo(addr, "INFO", section)
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(strings.NewReader(v.Str))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), field+":"); ok {
			return rest, nil
		}
	}
	return "", fmt.Errorf("%s: no %s in INFO %s", addr, field, section)
}

// listening reports whether something accepts connections on port.
func listening(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
