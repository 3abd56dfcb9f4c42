package proxy

import (
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/fleet"
)

// The admin endpoint answers questions about the running proxy in JSON,
// under /v1/ so that it can grow without breaking its clients:
//
//	GET /v1/pools                    every pool: PoolStatus values
//	GET /v1/pools/{pool}             one pool
//	GET /v1/pools/{pool}/locate?key=K[&key=K2...]
//	                                 where each key lives now: Location values
//	GET /v1/membership               every pool's source, revision and
//	                                 fingerprint: MembershipStatus values
//	GET /status (and /)              a page for a browser: every pool's
//	                                 servers, shares, revision, and whether
//	                                 the proxy agrees with kolco.admin_peers
//	GET /metrics                     the Prometheus metrics
//	GET /v1/pools/{pool}/trace       the pool's trace (traffic), for
//	                                 kolco plan --trace
//	POST /v1/pools/{pool}/move/pause (and .../resume)
//	                                 pause a store's mover, and let it go on
//	POST /v1/pools/{pool}/servers/{server}/rejoin
//	                                 an operator emptied a down server whose
//	                                 outage journal overflowed: it rejoins
//
// It listens on kolco.admin_listen, on 127.0.0.1 unless the setting names
// a host, and asks for "Authorization: Bearer <token>" when
// kolco.admin_token_file names a file holding the token; a browser may
// give the token as the password of HTTP basic authentication instead.

// PoolStatus is a pool as the admin endpoint reports it.
type PoolStatus struct {
	Name   string `json:"name"`
	Listen string `json:"listen"`
	// Protocol is "memcached", or "redis" for a Redis pool.
	Protocol     string `json:"protocol"`
	Distribution string `json:"distribution"`
	// Hash is the key hash: hash for ketama and modula, key_hash for
	// kolco's distributions.
	Hash     string         `json:"hash"`
	HashTag  string         `json:"hash_tag,omitempty"`
	Ejection string         `json:"ejection"`
	Replicas int            `json:"replicas"`
	Servers  []ServerStatus `json:"servers"`
	// Membership is where the servers come from, and the placement's
	// revision and fingerprint.
	Membership MembershipStatus `json:"membership"`
	// SweepDeferred says why the pool's sweep waits, while it does: a
	// proxy of kolco.admin_peers places otherwise, could not be asked or
	// may be behind its source.
	SweepDeferred string `json:"sweep_deferred,omitempty"`
	// StateMissing is set when the pool started without the record of its
	// placement's history while its servers held data.
	StateMissing *StateMissing `json:"state_missing,omitempty"`
	// Move is a store's move of its keys, while one is under way;
	// LastMove the last that ended, until the next.
	Move     *MoveStatus `json:"move,omitempty"`
	LastMove *LastMove   `json:"last_move,omitempty"`
	// Failovers are the latest servers the membership source repointed
	// (a Sentinel failover), oldest first.
	Failovers []Failover `json:"failovers,omitempty"`
	// Traffic is the pool's traffic sample, when it keeps one (traffic).
	Traffic *TrafficStatus `json:"traffic,omitempty"`
}

// ServerStatus is a server of a pool as the admin endpoint reports it.
type ServerStatus struct {
	// Name is the server's name as twemproxy names it: the name given,
	// else host on port 11211, else host:port.
	Name   string  `json:"name"`
	Addr   string  `json:"addr"`
	Weight float64 `json:"weight"`
	Zone   string  `json:"zone,omitempty"`
	// Up is false while the server is marked down.
	Up bool `json:"up"`
	// Share is the share of the pool's keys the server holds under the
	// placement in use (with replicas, of the copies), measured over
	// 65536 sample keys.
	Share float64 `json:"share"`
	// Health is the server as the proxy observes it: "down" while marked
	// down, "failing" while every request since its last reply failed
	// (under ejection none a dead server is never marked down, and is
	// failing), else "up".
	Health string `json:"health"`
	// Failing is the requests in a row that failed since the server's last
	// reply; FailingSince is when the server was marked down, or when the
	// first of them failed.
	Failing      int       `json:"failing,omitempty"`
	FailingSince time.Time `json:"failing_since,omitzero"`
	// LastError is the last error of a request at the server, and
	// LastErrorAt when it came, whatever the server's health now.
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	// Requests, Errors and Connections are the server's figures since the
	// proxy started: requests that ended at the server, answered or failed
	// (those that could not be sent, to a server refusing connections or
	// marked down, among them); of those, the ones that failed; and
	// connections open now. MeanLatency is the mean time from sending a
	// request to its reply, over the replies.
	Requests    uint64        `json:"requests"`
	Errors      uint64        `json:"errors"`
	Connections int64         `json:"connections"`
	MeanLatency time.Duration `json:"mean_latency_ns"`
	// Replicas are the server's replicas a Redis pool on Sentinel reads
	// from (replica_reads), with their lag.
	Replicas []ReplicaStatus `json:"replicas,omitempty"`
}

// serverStatus returns b as the admin endpoint reports it, with share its
// share of keys.
func (b *backend) serverStatus(share float64) ServerStatus {
	seen, st := b.health.observedNow(), b.stats
	ss := ServerStatus{Name: b.name(), Addr: b.addr, Weight: b.node.EffectiveWeight(), Zone: b.node.Zone,
		Up: !b.health.isDown(), Share: share, Health: "up", Failing: seen.failing, LastError: seen.lastErr,
		LastErrorAt: seen.lastErrAt, Requests: st.responses.Load() + st.errors.Load(), Errors: st.errors.Load(), Connections: st.conns.Load()}
	switch {
	case !ss.Up:
		ss.Health, ss.FailingSince = "down", seen.failingSince
		if at := st.ejectedAt.Load(); at != 0 {
			ss.FailingSince = time.UnixMicro(at)
		}
	case seen.failingNow(time.Now(), b.pool.cfg.HealthCheck.Interval >= 0, b.pool.cfg.ServerRetryTimeout):
		ss.Health, ss.FailingSince = "failing", seen.failingSince
	default:
		ss.Failing = 0
	}
	if n := st.responses.Load(); n > 0 {
		ss.MeanLatency = time.Duration(st.latencyNanos.Load() / int64(n))
	}
	return ss
}

// Location is where one key lives under the placement a pool uses now.
type Location struct {
	Pool string `json:"pool"`
	// Key is the key asked about; JSON holds UTF-8 only, so a key that is
	// not valid UTF-8 is shown with replacement characters (it was placed
	// by its exact bytes).
	Key string `json:"key"`
	// Servers hold the key, in preference order: its owner, or with
	// replicas the server of each copy. Empty when no server is live.
	Servers []ServerRef `json:"servers"`
	// Read is the server a read of the key goes to now (with replicas,
	// the copy chosen by zone and health); nil when none.
	Read *ServerRef `json:"read"`
	// Previous are the servers a read that misses at Read falls back to
	// while a change's migration window is open, newest placement first;
	// absent otherwise.
	Previous []ServerRef `json:"previous,omitempty"`
}

// ServerRef names a server.
type ServerRef struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
	Up   bool   `json:"up"`
}

func (b *backend) ref() ServerRef {
	return ServerRef{Name: b.name(), Addr: b.addr, Up: !b.health.isDown()}
}

// status returns the entry's pool as the admin endpoint reports it.
func (e poolEntry) status() PoolStatus {
	p := e.p
	c := p.cfg
	ps := PoolStatus{Name: p.name, Listen: c.Listen, Protocol: c.protocol(), Distribution: c.Distribution, Hash: c.Hash, HashTag: c.HashTag,
		Ejection: c.Ejection, Replicas: c.Replicas}
	if !isTwemproxy(c) {
		ps.Hash = c.KeyHash
	}
	shares := p.placing.shares()
	for _, b := range p.backends {
		ss := b.serverStatus(shares[b])
		ss.Replicas = p.front.replicas(p, b.name())
		ps.Servers = append(ps.Servers, ss)
	}
	ps.Membership = e.membershipStatus()
	if why := p.mig.stats.deferWhy.Load(); why != nil {
		ps.SweepDeferred = *why
	}
	ps.StateMissing = p.stats.stateMissing.Load()
	ps.Move, ps.LastMove = p.mover.status()
	ps.Failovers, _ = p.stats.failovers.snapshot()
	ps.Traffic = p.traffic.status(p.place.Load(), p.hot)
	return ps
}

// locate returns where key lives under the placement the pool uses now.
func (p *pool) locate(key string) Location {
	pl := p.place.Load()
	loc := Location{Pool: p.name, Key: key, Servers: []ServerRef{}}
	var sc routeScratch
	for _, b := range pl.route([]byte(key), true, &sc) {
		loc.Servers = append(loc.Servers, b.ref())
	}
	if read := pl.route([]byte(key), false, &sc); len(read) > 0 {
		r := read[0].ref()
		loc.Read = &r
		loc.Previous = pl.previous([]byte(key), read[0], &sc)
	}
	return loc
}

// handler serves the admin endpoint's paths, and /metrics.
func (a *adminReads) handler(token []byte) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.met.handler())
	mux.HandleFunc("GET /v1/pools", func(w http.ResponseWriter, _ *http.Request) {
		all := []PoolStatus{}
		for _, e := range a.entries() {
			all = append(all, e.status())
		}
		writeJSON(w, http.StatusOK, all)
	})
	mux.HandleFunc("GET /v1/pools/{pool}", func(w http.ResponseWriter, r *http.Request) {
		for _, e := range a.entries() {
			if e.p.name == r.PathValue("pool") {
				writeJSON(w, http.StatusOK, e.status())
				return
			}
		}
		a.pool(w, r) // answers 404
	})
	mux.HandleFunc("GET /v1/membership", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(fleet.InstanceHeader, a.fleet.instance())
		all := []MembershipStatus{}
		for _, e := range a.entries() {
			all = append(all, e.membershipStatus())
		}
		writeJSON(w, http.StatusOK, all)
	})
	a.handlePage(mux, token)
	a.handleMove(mux)
	a.handleTraffic(mux)
	mux.HandleFunc("GET /v1/pools/{pool}/locate", func(w http.ResponseWriter, r *http.Request) {
		p := a.pool(w, r)
		if p == nil {
			return
		}
		keys := r.URL.Query()["key"]
		if len(keys) == 0 {
			writeJSON(w, http.StatusBadRequest, adminError{"give one or more keys: ?key=K&key=K2"})
			return
		}
		locs := make([]Location, 0, len(keys))
		for _, k := range keys {
			locs = append(locs, p.locate(k))
		}
		writeJSON(w, http.StatusOK, locs)
	})
	mux.HandleFunc("POST /v1/pools/{pool}/servers/{server}/rejoin", func(w http.ResponseWriter, r *http.Request) {
		p := a.pool(w, r)
		if p == nil {
			return
		}
		if err := p.outages.rejoinEmptied(r.PathValue("server")); err != nil {
			writeJSON(w, http.StatusConflict, adminError{err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, struct {
			Rejoin string `json:"rejoin"`
		}{"at the server's next successful probe"})
	})
	return requireToken(mux, token)
}

// requireToken returns h, asking for the token first unless it is empty:
// as a bearer token, or from a browser as basic authentication's password.
// The admin endpoint and the metrics endpoint ask for the same, so that
// /metrics on its own port is no more open than on the admin port.
func requireToken(h http.Handler, token []byte) http.Handler {
	if len(token) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			_, got, ok = r.BasicAuth() // a browser's: any user, the token as the password
		}
		if !ok || subtle.ConstantTimeCompare([]byte(got), token) != 1 {
			if isPage(r) {
				w.Header().Set("WWW-Authenticate", `Basic realm="kolco proxy: any user, the admin token as password"`)
			} else {
				w.Header().Set("WWW-Authenticate", `Bearer realm="kolco proxy"`)
			}
			writeJSON(w, http.StatusUnauthorized, adminError{"this endpoint wants Authorization: Bearer <token>"})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// pool returns the pool the request names, or answers 404.
func (a *adminReads) pool(w http.ResponseWriter, r *http.Request) *pool {
	name := r.PathValue("pool")
	for _, p := range a.pools() {
		if p.name == name {
			return p
		}
	}
	writeJSON(w, http.StatusNotFound, adminError{fmt.Sprintf("no pool %q", name)})
	return nil
}

// adminError is the body of an admin request that failed.
type adminError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client is gone
}

// adminAddr returns the address the admin or metrics endpoint listens on:
// listen, on 127.0.0.1 when it names no host (":22223"), since what they
// tell - where keys live, the servers' addresses - is not for every
// network the machine is on; a host names where, 0.0.0.0 every interface.
func adminAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err == nil && host == "" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return listen
}

// readToken reads the admin token from path: the file's first line,
// without surrounding space. The error is a [*ConfigError].
func readToken(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &ConfigError{Key: GlobalKey + ".admin_token_file", Err: err}
	}
	line, _, _ := strings.Cut(string(data), "\n")
	if line = strings.TrimSpace(line); line == "" {
		return nil, &ConfigError{Key: GlobalKey + ".admin_token_file", Err: errors.New("the file holds no token")}
	}
	return []byte(line), nil
}

// startAdmin listens on the admin address and serves the admin endpoint,
// its token file's relative path taken from dir; it returns the
// endpoint's server and listening socket. The caller holds Server.mu.
func (e *sideEndpoints) startAdmin(g *GlobalConfig, dir string, tlsCfg *tls.Config) (*http.Server, net.Listener, error) {
	var token []byte
	if g.AdminTokenFile != "" {
		var err error
		if token, err = readToken(inDir(dir, g.AdminTokenFile)); err != nil {
			return nil, nil, err
		}
	}
	ln, err := e.sockets.listenTCP(adminAddr(g.AdminListen))
	if err != nil {
		return nil, nil, fmt.Errorf("admin: %w", err)
	}
	e.reads.fleet.token.Store(&token)
	srv := &http.Server{Handler: e.reads.handler(token), ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(e.log.Handler(), slog.LevelDebug)}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		if err := srv.Serve(tlsListener(ln, tlsCfg)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.log.Error("the admin endpoint stopped serving", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return srv, ln, nil
}

// previous returns the servers a read of key that misses at n falls back
// to in pl's open migration window, newest first, as the admin endpoint
// shows them; nil outside a window. Unlike sources it marks nothing.
func (pl *placement) previous(key []byte, n *backend, sc *routeScratch) []ServerRef {
	m := pl.mig
	if m == nil || !m.open() || pl.replicas > 1 {
		return nil
	}
	var seen []*backend
	var out []ServerRef
	for _, v := range m.priors {
		o := v.owner(key, sc)
		if o == nil || o == n || o.addr == n.addr || slices.Contains(seen, o) || o.health.isDown() || !m.readable(o) {
			continue
		}
		seen = append(seen, o)
		out = append(out, o.ref())
	}
	return out
}
