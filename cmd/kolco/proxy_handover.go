package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/kolco-dev/kolco"
)

// A handover (SIGUSR2, see handover in proxy.go) starts the program again
// with the same command line and passes it, as inherited file descriptors
// and environment variables, what it takes over: the listening sockets,
// the socket the clients are handed over on, and the views of the gossip
// pools. This file reads them in the new process.

// listenFDsEnv passes a new process the listening sockets it takes over:
// JSON mapping each socket's name (proxy.Server.ListenerFiles) to its file
// descriptor; clientsFDEnv, the descriptor of the unix socket the old
// process hands its clients over on (proxy.Server.HandOver, Adopt).
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
