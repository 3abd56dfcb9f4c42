package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/proxy"
)

// A handover (SIGUSR2) starts the program again with the same command
// line and passes it, as inherited file descriptors and environment
// variables, what it takes over: the listening sockets, the socket the
// clients are handed over on, and the views of the gossip pools.

// listenFDsEnv passes a new process the listening sockets it takes over:
// JSON mapping each socket's name (proxy.Server.ListenerFiles) to its file
// descriptor; clientsFDEnv, the descriptor of the unix socket the old
// process hands its clients over on (proxy.Server.HandOff, Adopt).
const (
	listenFDsEnv = "KOLCO_LISTEN_FDS"
	clientsFDEnv = "KOLCO_CLIENTS_FD"
	// viewsEnv passes the nodes the old process serves for each pool on
	// a gossip pool (proxy.Server.Views), as JSON: the new process's
	// member joins only once the old one has left.
	viewsEnv = "KOLCO_GOSSIP_VIEWS"
)

// maxViewsEnv bounds the views passed in the environment (an argument or
// variable of Linux holds at most 128 KiB); past it the new process starts
// its gossip pools from their configured servers.
const maxViewsEnv = 100 << 10

// handedViews returns the views the process this one takes over from
// passed, or nil.
func handedViews() (map[string][]kolco.Node, error) {
	v := os.Getenv(viewsEnv)
	os.Unsetenv(viewsEnv)
	if v == "" {
		return nil, nil
	}
	var views map[string][]kolco.Node
	if err := json.Unmarshal([]byte(v), &views); err != nil {
		return nil, fmt.Errorf("%s: %w", viewsEnv, err)
	}
	return views, nil
}

// handoverTimeout bounds the wait for the new process to serve.
const handoverTimeout = 30 * time.Second

// handedClients returns the socket the process this one takes over from
// hands its clients over on, or nil.
func handedClients() (*net.UnixConn, error) {
	v := os.Getenv(clientsFDEnv)
	os.Unsetenv(clientsFDEnv)
	if v == "" {
		return nil, nil
	}
	fd, err := strconv.Atoi(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", clientsFDEnv, err)
	}
	f := os.NewFile(uintptr(fd), "handed clients")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", clientsFDEnv, err)
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("%s: not a unix socket", clientsFDEnv)
	}
	return uc, nil
}

// inheritedListeners returns the listening sockets passed by the process
// this one takes over from, or none.
func inheritedListeners() (map[string]net.Listener, error) {
	v := os.Getenv(listenFDsEnv)
	os.Unsetenv(listenFDsEnv) // not for the processes this one starts
	if v == "" {
		return nil, nil
	}
	var fds map[string]int
	if err := json.Unmarshal([]byte(v), &fds); err != nil {
		return nil, fmt.Errorf("%s: %w", listenFDsEnv, err)
	}
	lns := make(map[string]net.Listener, len(fds))
	for name, fd := range fds {
		f := os.NewFile(uintptr(fd), name)
		ln, err := net.FileListener(f)
		f.Close() // ln holds a copy
		if err != nil {
			return nil, fmt.Errorf("inherited socket %s: %w", name, err)
		}
		lns[name] = ln
	}
	return lns, nil
}

// handover starts the program again with the same command line, hands it
// the server's listening sockets and waits until it serves, and reports
// whether it does: then this process stops accepting and drains its
// clients, handing each to the new one at a request boundary, while the
// new one accepts on the same sockets, so no client is refused and none
// loses a request. If the new process fails, this one goes on serving.
func handover(s *proxy.Server, log *slog.Logger) bool {
	err := startSuccessor(s, log)
	if err != nil {
		log.Error("SIGUSR2: no handover; serving on", "err", err)
		return false
	}
	return true
}

func startSuccessor(s *proxy.Server, log *slog.Logger) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	files, err := s.ListenerFiles()
	if err != nil {
		return err
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	ours, theirs, err := clientSockets()
	if err != nil {
		return err
	}
	fds := map[string]int{}
	var extra []*os.File
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fds[name] = 3 + len(extra)
		extra = append(extra, files[name])
	}
	extra = append(extra, theirs, w)
	env, _ := json.Marshal(fds)
	cmd := &exec.Cmd{Path: exe, Args: os.Args, Stdout: os.Stdout, Stderr: os.Stderr, ExtraFiles: extra,
		Env: append(environ(), listenFDsEnv+"="+string(env), fmt.Sprintf("%s=%d", clientsFDEnv, 1+len(extra)),
			fmt.Sprintf("%s=%d", readyEnv, 2+len(extra)))}
	if views := s.Views(); len(views) > 0 {
		if data, _ := json.Marshal(views); len(data) <= maxViewsEnv {
			cmd.Env = append(cmd.Env, viewsEnv+"="+string(data))
		} else {
			log.Warn("SIGUSR2: the gossip pools' views are too large to hand over; the new process serves their configured servers until its member joins", "bytes", len(data))
		}
	}
	err = cmd.Start()
	w.Close()
	theirs.Close()
	if err != nil {
		ours.Close()
		return err
	}
	if word := readWord(r, handoverTimeout); word != "ready" {
		ours.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if word == "" {
			return errors.New("the new process did not serve")
		}
		return errors.New(word)
	}
	log.Info("SIGUSR2: the new process serves on the listening sockets; handing it the clients", "pid", cmd.Process.Pid)
	s.HandOff(ours)
	return cmd.Process.Release()
}

// clientSockets returns the two ends of the unix socket the clients are
// handed over on: this process's, and the new one's to pass it.
func clientSockets() (*net.UnixConn, *os.File, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	theirs := os.NewFile(uintptr(fds[1]), "clients (new process)")
	f := os.NewFile(uintptr(fds[0]), "clients")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		theirs.Close()
		return nil, nil, err
	}
	return c.(*net.UnixConn), theirs, nil
}
