package proxy

import (
	"errors"
	"io"
	"maps"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
)

// An upgrade or restart without refusing clients hands the listening
// sockets to the new process: the old one passes them (as inherited file
// descriptors, see ListenerFiles), the new one listens on them (Inherit)
// and serves, and only then does the old one stop accepting and drain its
// clients (Shutdown). The sockets never close, so no client is refused:
// between the two, both processes accept on them.

// listenKey names a listening socket by its network and address as the
// configuration gives it, so that a new process finds the socket for each
// address it is configured with, whatever its pools are named.
func listenKey(network, addr string) string { return network + ":" + addr }

// Inherit gives the server listening sockets to use, by the names
// ListenerFiles gives them, instead of listening anew on the same
// addresses: call it before Start. Start closes those no setting uses.
func (s *Server) Inherit(lns map[string]net.Listener) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listening.sockets.inherited = lns
	s.sourcing.tookOver = s.sourcing.tookOver || len(lns) > 0
}

// Views returns the nodes each pool on a gossip pool serves now, by pool
// name, for a process taking over from this one (InheritViews): its gossip
// member joins only once this one has left, and serves these meanwhile.
func (s *Server) Views() map[string][]kolco.Node {
	s.sourcing.lockFirst()
	defer s.mu.Unlock()
	out := map[string][]kolco.Node{}
	for name, ps := range s.sourcing.byPool {
		if v := s.sourcing.serving(name); v != nil && ps.key.membership.Gossip != nil {
			out[name] = slices.Clone(v.nodes)
		}
	}
	return out
}

// InheritViews gives the server the nodes the process it takes over from
// served (Views) for its pools on a gossip pool, to serve until its own
// member has joined: call it before Start. A view a source's version could
// not be - nodes invalid, unsorted or named twice, none, or one without an
// address - is ignored.
func (s *Server) InheritViews(views map[string][]kolco.Node) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inherited := map[string][]kolco.Node{}
	for name, nodes := range views {
		if (membership.Version{Nodes: nodes}).Validate() == nil && checkNodes(nodes, false) == nil {
			inherited[name] = nodes
		}
	}
	s.sourcing.inheritedViews = inherited
}

// ListenerFiles returns copies of the server's listening sockets - the
// pools', and those of the metrics, stats and admin endpoints - by name,
// for a new process to Inherit. From then on the server's unix sockets are
// not removed when it closes them, since the new process listens on them.
// The caller closes the files.
func (s *Server) ListenerFiles() (map[string]*os.File, error) {
	s.sourcing.lockFirst()
	defer s.mu.Unlock()
	g := s.cfg.WithDefaults().Global
	return s.listening.files([]keyedListener{
		{listenKey("tcp", adminAddr(g.MetricsListen)), s.side.metricsLn},
		{listenKey("tcp", g.StatsListen), s.side.statsLn()},
		{listenKey("tcp", adminAddr(g.AdminListen)), s.side.adminLn},
	})
}

// keyedListener is a listening socket with its name for a handover
// (listenKey); ln is nil for an endpoint not configured.
type keyedListener struct {
	key string
	ln  net.Listener
}

// files returns copies of the pools' listening sockets, and of those of
// side, by name (see Server.ListenerFiles). The caller holds mu.
func (ls *listening) files(side []keyedListener) (map[string]*os.File, error) {
	files := map[string]*os.File{}
	add := func(key string, ln net.Listener) error {
		for g, ok := ln.(*gatedListener); ok; g, ok = ln.(*gatedListener) {
			ln = g.Listener // held for a handover, a source, or both
		}
		if ul, ok := ln.(*net.UnixListener); ok {
			ul.SetUnlinkOnClose(false)
		}
		f, err := listenerFile(ln, key)
		if err != nil {
			return err
		}
		files[key] = f
		return nil
	}
	var err error
	for _, name := range slices.Sorted(maps.Keys(ls.byName)) {
		l := ls.byName[name]
		spec, _ := parseListen(l.pool.Load().cfg.Listen) // valid: it listens
		if err = add(listenKey(spec.network, spec.addr), l.ln); err != nil {
			break
		}
		if l.side != nil {
			if err = add(l.sideKey, l.side); err != nil {
				break
			}
		}
	}
	for _, sd := range side {
		if err == nil && sd.ln != nil {
			err = add(sd.key, sd.ln)
		}
	}
	if err != nil {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	return files, nil
}

// A handover hands the clients over too. Once the new process serves, the
// old one drains (Shutdown) handing each client's connection, at its next
// request boundary, to the new one over a unix socket the two share
// (HandOver, Adopt): the connection's descriptor, the name of the
// listening socket it came in on, what its connection commands set (a
// Redis client's protocol, authentication and name), and the bytes the
// client sent that the old process had not read as requests. The new process serves it from
// there: the client sees one connection throughout, and each request it
// sent is answered once, by one process or the other.

// HandOver makes the server's drain (Shutdown) hand each client's
// connection to the process at the other end of conn, which calls Adopt,
// instead of closing it; conn is closed once every client is handed over
// or gone. Call it when the new process serves, before Shutdown. A
// connection that cannot be handed over is closed as a drain closes it.
func (s *Server) HandOver(conn *net.UnixConn) {
	s.sourcing.lockFirst()
	defer s.mu.Unlock()
	s.listening.handover = &clientHandover{conn: conn}
}

// Adopt serves the client connections another process hands over on conn
// (see HandOver), each as if accepted on this server's listening socket of
// the same name, until the other process closes conn or this server shuts
// down. A connection whose socket this server does not listen on is
// closed.
func (s *Server) Adopt(conn *net.UnixConn) { s.listening.adopt(conn) }

// adopt is Adopt.
func (ls *listening) adopt(conn *net.UnixConn) {
	ls.mu.Lock()
	ls.adopting = conn
	ls.mu.Unlock()
	ls.wg.Add(1)
	go func() {
		defer ls.wg.Done()
		for {
			f, key, state, unread, err := receiveHandover(conn)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
					ls.log.Warn("handover: receiving clients", "err", err)
				}
				return
			}
			nc, err := net.FileConn(f)
			f.Close()
			if err != nil {
				ls.log.Warn("handover: a client's connection", "err", err)
				continue
			}
			l := ls.of(key)
			if l == nil {
				ls.log.Warn("handover: a client of a socket this process does not listen on: closed", "socket", key)
				nc.Close()
				continue
			}
			c := &client{conn: nc, pool: l.pool, budget: ls.budget, log: ls.log, listenKey: key, unread: unread, connState: state}
			if !ls.track(c) {
				nc.Close()
				continue
			}
			ls.serveClient(l, c)
		}
	}()
}

// of returns the listener of the socket named key, or nil.
func (ls *listening) of(key string) *listener {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, l := range ls.byName {
		if l.key == key {
			return l
		}
	}
	return nil
}

// Serving returns a channel closed once the server accepts clients on
// every socket: once each of its pools on a membership source serves a
// version of its source (gossip pools serve their configured servers or,
// in a server that took over another's sockets, the old process's view,
// see InheritViews) - for at most sourceWait; at Start when no pool is on
// a source. Until then a server taking over leaves its clients to the
// process it takes over from, which places their keys as its sources
// say, and a server started afresh keeps them waiting (see listener.gatePlaced). A
// process says it serves once this is closed.
func (s *Server) Serving() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listening.sockets.gate()
}

// sourceWait bounds how long a server started afresh waits for its
// pools' membership sources before it accepts clients.
const sourceWait = 5 * time.Second

// takeOverWait is sourceWait for a server that took over another's
// sockets: the process it takes over from serves every client meanwhile,
// placing by its sources, so waiting costs nothing but the handover's
// length, and serving the configured servers reads a server the fleet may
// have removed. At 5 s, a proxy starved of CPU at a handover while etcd
// had removed a server served its configured servers for 2.8 s and read
// values older than acknowledged deletes and sets from the removed server
// (the fault schedule's seed 2420). Below the 30 s `kolco proxy` gives a
// new process to say it serves before it calls the handover failed.
const takeOverWait = 20 * time.Second

// acceptWhenPlaced opens the accept gate once the sources have placed the
// pools or sourceWait has passed (then a server that took over says which
// have not; one started afresh says it per pool, see listener.gatePlaced): at once
// when no pool waits for its source. It forgets what it inherited. The
// caller holds mu.
func (src *sourcing) acceptWhenPlaced() {
	gate := src.listening.sockets.gate()
	took := src.tookOver
	src.tookOver, src.inheritedViews = false, nil
	if src.listening.closed || len(src.byPool.pending(src.serving)) == 0 {
		close(gate)
		return
	}
	go func() {
		defer close(gate)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		wait := sourceWait
		if took {
			wait = takeOverWait
		}
		deadline := time.Now().Add(wait)
		for pending := src.pending(); len(pending) > 0; pending = src.pending() {
			if time.Now().After(deadline) {
				if !took {
					return
				}
				src.log.Warn("taking over before the membership sources of these pools gave a version they serve: they serve their configured servers until then",
					"pools", pending, "waited", wait)
				return
			}
			<-tick.C // a source's first version comes from another process
		}
	}()
}

// pending returns the pools whose sources have not placed them yet (see
// poolSources.pending); none once the server is closed.
func (src *sourcing) pending() []string {
	src.mu.Lock()
	defer src.mu.Unlock()
	if src.listening.closed {
		return nil
	}
	return src.byPool.pending(src.serving)
}

// gatedListener is an inherited socket that accepts once open is closed.
type gatedListener struct {
	net.Listener
	open   <-chan struct{}
	closed chan struct{}
	once   sync.Once
}

func (g *gatedListener) Accept() (net.Conn, error) {
	select {
	case <-g.open:
		return g.Listener.Accept()
	case <-g.closed:
		return nil, net.ErrClosed
	}
}

func (g *gatedListener) Close() error {
	g.once.Do(func() { close(g.closed) })
	return g.Listener.Close()
}
