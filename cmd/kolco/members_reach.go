package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/etcd"
)

// refusedDial bounds the look at each endpoint before a one-shot command:
// a refusal comes at once; anything slower is left to the etcd client and
// its --timeout.
const refusedDial = time.Second

// storeNow returns the store the flags describe for a command that asks
// it once (list, add, remove, ...): when every endpoint refuses the
// connection - nothing listens there - it fails at once, naming
// --endpoints, where the etcd client would retry for --timeout and say
// only "context deadline exceeded". register waits for etcd instead,
// since a sidecar may start before it.
func (e *etcdFlags) storeNow() (*etcd.Store, error) {
	s, err := e.store()
	if err != nil {
		return nil, err
	}
	if err := e.refused(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// refused returns an error wrapping membership.ErrUnreachable when every
// endpoint of --endpoints refuses a TCP connection, else nil.
func (e *etcdFlags) refused() error {
	var why []string
	for _, ep := range strings.Split(e.endpoints, ",") {
		ep = strings.TrimSpace(ep)
		u, err := url.Parse(ep)
		if ep == "" || err != nil || u.Host == "" || u.Scheme == "unix" || u.Scheme == "unixs" {
			return nil // not a host:port to look at: the client says
		}
		c, err := net.DialTimeout("tcp", u.Host, min(refusedDial, e.timeout))
		if err == nil {
			c.Close()
			return nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil
		}
		why = append(why, fmt.Sprintf("%s: %v", ep, err))
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("%w: etcd refused the connection at %s: is etcd running there? --endpoints gives its client URLs (now %s)",
		membership.ErrUnreachable, strings.Join(why, "; "), e.endpoints)
}

// hint adds to an error of the store's the flags that say where etcd is
// asked and for how long, when etcd could not be reached.
func (e *etcdFlags) hint(err error) error {
	if err == nil || !errors.Is(err, membership.ErrUnreachable) {
		return err
	}
	return fmt.Errorf("%w (etcd asked at --endpoints %s, within --timeout %v)", err, e.endpoints, e.timeout)
}
