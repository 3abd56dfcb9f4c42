// Package sentinel is a membership source whose nodes are Redis Sentinel
// masters: each node is a shard named by its master name, which is its
// identity and what it is placed by, and its address is the shard's
// primary as the Sentinels report it now. A failover changes a node's
// address and nothing else, so a placement over this source never moves
// a key on a failover; the follower of the source (membership.Follow)
// sees an update of the node, and a proxy sends new requests to the new
// primary.
//
// The source asks every Sentinel for each master (SENTINEL MASTER) and
// takes, of those that answer, the address of the greatest config-epoch:
// the epoch of the newest failover, which a Sentinel that missed it does
// not have - never, unless more than half of the Sentinels answer so, an
// older one than it took before. It asks again every Interval (sooner
// after a failure to ask: see membership.Poll), at once when a Sentinel
// announces a failover (its +switch-master channel), and when Nudge is
// called (by a client whose primary answered READONLY or stopped). One
// Sentinel answering is enough; Sentinels may fail and come back.
package sentinel

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/resp"
	"github.com/kolco-dev/kolco/membership"
)

// Source follows the primaries of Sentinel masters.
type Source struct {
	// Sentinels are the "host:port" addresses of the Sentinels to ask.
	// Required.
	Sentinels []string
	// Masters are the shards: each node's ID is a master name the
	// Sentinels monitor, with its weight and zone; Addr is not read.
	// Required.
	Masters []kolco.Node
	// Username and Password, when Password is set, authenticate to the
	// Sentinels (AUTH; a Sentinel with requirepass, or an ACL user).
	Username, Password string
	// Interval between askings. Default 1 s.
	Interval time.Duration
	// Timeout of one asking of one Sentinel. Default 1 s.
	Timeout time.Duration
	// TLS, when set, reaches the Sentinels over TLS (a Sentinel's
	// tls-port) with a copy of it whose ServerName, when empty, is the
	// host of the Sentinel's address.
	TLS *tls.Config

	nudgeOnce sync.Once
	nudge     chan struct{}

	mu     sync.Mutex         // guards newest and downAfter
	newest map[string]primary // by master: the answer of the greatest config-epoch seen
	// downAfter is, by master, the least down-after-milliseconds of the
	// Sentinels that answered the last asking that had an answer for it.
	downAfter map[string]time.Duration
}

func (s *Source) interval() time.Duration { return durationOr(s.Interval, time.Second) }
func (s *Source) timeout() time.Duration  { return durationOr(s.Timeout, time.Second) }

func durationOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (s *Source) nudges() chan struct{} {
	s.nudgeOnce.Do(func() { s.nudge = make(chan struct{}, 1) })
	return s.nudge
}

// Nudge asks the Sentinels again now, as a follower does when a primary
// answers READONLY (it was demoted) or stops answering.
func (s *Source) Nudge() {
	select {
	case s.nudges() <- struct{}{}:
	default:
	}
}

func (s *Source) check() error {
	switch {
	case len(s.Sentinels) == 0:
		return fmt.Errorf("%w: sentinel: no sentinels to ask", membership.ErrBadConfig)
	case len(s.Masters) == 0:
		return fmt.Errorf("%w: sentinel: no masters", membership.ErrBadConfig)
	case s.Username != "" && s.Password == "":
		return fmt.Errorf("%w: sentinel: a username without a password", membership.ErrBadConfig)
	}
	seen := map[string]bool{}
	for _, m := range s.Masters {
		n := kolco.Node{ID: m.ID, Weight: m.Weight, Zone: m.Zone}
		if err := n.Validate(); err != nil {
			return fmt.Errorf("%w: sentinel: master %q: %w", membership.ErrBadConfig, m.ID, err)
		}
		if strings.ContainsAny(m.ID, " \t\r\n") {
			return fmt.Errorf("%w: sentinel: master name %q has a space", membership.ErrBadConfig, m.ID)
		}
		if seen[m.ID] {
			return fmt.Errorf("%w: sentinel: master %q named twice", membership.ErrBadConfig, m.ID)
		}
		seen[m.ID] = true
	}
	return nil
}

// Read returns each master with the address of its primary now.
func (s *Source) Read(ctx context.Context) (membership.Version, error) {
	if err := s.check(); err != nil {
		return membership.Version{}, err
	}
	nodes, err := s.primaries(ctx)
	if err != nil {
		return membership.Version{}, err
	}
	return membership.Version{Revision: 1, Nodes: nodes, Resync: true}, nil
}

// Follow reports the masters' primaries, and each change of them, until
// ctx ends. Its revisions number the distinct versions it has seen from 1.
func (s *Source) Follow(ctx context.Context, r membership.Reporter) error {
	if err := s.check(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for _, addr := range s.Sentinels {
		wg.Add(1)
		go func() { defer wg.Done(); s.listen(ctx, addr) }()
	}
	return membership.Poll{Ask: s.primaries, Interval: s.interval(), Nudge: s.nudges(), MinGap: minAskGap}.Follow(ctx, r)
}

// minAskGap is the least time between two askings that nudges bring.
const minAskGap = 100 * time.Millisecond

// primary is one Sentinel's answer for one master.
type primary struct {
	addr  string
	epoch int64
	// downAfter is the Sentinel's down-after-milliseconds for the
	// master; 0 when it did not say.
	downAfter time.Duration
}

// primaries asks every Sentinel, at once, for every master, and returns
// the masters with the address of the greatest config-epoch, sorted by
// ID.
func (s *Source) primaries(ctx context.Context) ([]kolco.Node, error) {
	answers := make([][]primary, len(s.Sentinels))
	errs := make([]error, len(s.Sentinels))
	var wg sync.WaitGroup
	for i, addr := range s.Sentinels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i], errs[i] = s.ask(ctx, addr)
		}()
	}
	wg.Wait()
	best := make([]primary, len(s.Masters))
	downAfter := make([]time.Duration, len(s.Masters))
	answered := 0
	for i, a := range answers {
		if errs[i] != nil {
			continue
		}
		answered++
		for j, p := range a {
			if p.addr != "" && (best[j].addr == "" || p.epoch > best[j].epoch) {
				best[j] = p
			}
			if p.downAfter > 0 && (downAfter[j] == 0 || p.downAfter < downAfter[j]) {
				downAfter[j] = p.downAfter
			}
		}
	}
	if answered == 0 {
		return nil, fmt.Errorf("%w: sentinel: no Sentinel answered: %w", membership.ErrUnreachable, errors.Join(errs...))
	}
	s.keepNewest(best, answered)
	s.keepDownAfter(downAfter)
	nodes := make([]kolco.Node, len(s.Masters))
	for j, m := range s.Masters {
		if best[j].addr == "" {
			return nil, fmt.Errorf("%w: sentinel: no Sentinel that answered knows master %q", membership.ErrBadContent, m.ID)
		}
		nodes[j] = kolco.Node{ID: m.ID, Addr: best[j].addr, Weight: cmpOr(m.Weight, 1), Zone: m.Zone}
	}
	membership.SortNodes(nodes)
	return nodes, nil
}

// keepNewest never lets an asking take a master back to a primary of an
// older config-epoch than one taken before: the Sentinels that saw the
// newer failover may just not have answered in time (a busy machine, a
// Sentinel away), and those that answered missed it. Only when more
// than half of the Sentinels answered, none with that epoch, is their
// older word taken - their state was lost, and they watch the master
// afresh. answered is how many Sentinels answered.
func (s *Source) keepNewest(best []primary, answered int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.newest == nil {
		s.newest = map[string]primary{}
	}
	quorum := answered > len(s.Sentinels)/2
	for j, m := range s.Masters {
		seen, ok := s.newest[m.ID]
		if ok && best[j].epoch < seen.epoch && (!quorum || best[j].addr == "") {
			best[j] = seen
			continue
		}
		if best[j].addr != "" {
			s.newest[m.ID] = best[j]
		}
	}
}

// keepDownAfter records, by master, the least down-after-milliseconds of
// an asking (0: no Sentinel said; the one recorded before stays).
func (s *Source) keepDownAfter(downAfter []time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.downAfter == nil {
		s.downAfter = map[string]time.Duration{}
	}
	for j, m := range s.Masters {
		if downAfter[j] > 0 {
			s.downAfter[m.ID] = downAfter[j]
		}
	}
}

// DownAfter returns how long master's primary may be silent before the
// Sentinels take it for down and fail it over: the least
// down-after-milliseconds of those that answered the last asking (SENTINEL
// MASTER), or 0 before any did. A client that can make the primary wait
// on something else - a proxy's MIGRATE waits for its target, and blocks
// the primary meanwhile - keeps the wait well below it, or the Sentinels
// fail a healthy primary over and the writes it acknowledges until its
// clients learn of the failover are lost.
func (s *Source) DownAfter(master string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downAfter[master]
}

func cmpOr(w, def float64) float64 {
	if w == 0 {
		return def
	}
	return w
}

// ask asks the Sentinel at addr for every master, pipelined. A master it
// does not know has no address in the answer.
func (s *Source) ask(ctx context.Context, addr string) ([]primary, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	c, err := s.dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	for _, m := range s.Masters {
		if err := c.Send("SENTINEL", "MASTER", m.ID); err != nil {
			return nil, err
		}
	}
	out := make([]primary, len(s.Masters))
	for i := range s.Masters {
		v, err := c.Receive()
		var re resp.Error
		switch {
		case errors.As(err, &re):
			continue // "ERR No such master with that name"
		case err != nil:
			return nil, fmt.Errorf("%s: %w", addr, err)
		}
		out[i], err = parseMaster(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", addr, err)
		}
	}
	return out, nil
}

// dial connects to a Sentinel, authenticated, with ctx's deadline on
// the connection.
func (s *Source) dial(ctx context.Context, addr string) (*resp.Conn, error) {
	var c *resp.Conn
	if s.TLS == nil {
		var err error
		if c, err = resp.Dial(ctx, addr); err != nil {
			return nil, err
		}
	} else {
		cfg := s.TLS.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		conn, err := (&tls.Dialer{Config: cfg}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("%s: TLS: %w", addr, err)
		}
		c = resp.NewConn(conn)
	}
	if d, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(d)
	}
	if s.Password != "" {
		args := []string{"AUTH", s.Password}
		if s.Username != "" {
			args = []string{"AUTH", s.Username, s.Password}
		}
		if _, err := c.Do(args...); err != nil {
			c.Close()
			return nil, fmt.Errorf("%s: AUTH: %w", addr, err)
		}
	}
	return c, nil
}

// parseMaster reads SENTINEL MASTER's reply, a flat array of field names
// and values: the primary's address, the config-epoch and
// down-after-milliseconds.
func parseMaster(v resp.Value) (primary, error) {
	fields, ok := v.Strings()
	if !ok || len(fields)%2 != 0 {
		return primary{}, fmt.Errorf("%w: sentinel: SENTINEL MASTER answered %s", membership.ErrBadContent, describe(v))
	}
	var ip, port string
	var p primary
	for i := 0; i < len(fields); i += 2 {
		switch fields[i] {
		case "ip":
			ip = fields[i+1]
		case "port":
			port = fields[i+1]
		case "config-epoch":
			p.epoch, _ = strconv.ParseInt(fields[i+1], 10, 64)
		case "down-after-milliseconds":
			if ms, err := strconv.ParseInt(fields[i+1], 10, 64); err == nil && ms > 0 {
				p.downAfter = time.Duration(ms) * time.Millisecond
			}
		}
	}
	n, err := strconv.Atoi(port)
	if ip == "" || err != nil || n < 1 || n > 65535 || strings.ContainsAny(ip, " \t\r\n") {
		return primary{}, fmt.Errorf("%w: sentinel: SENTINEL MASTER gave the address %q port %q", membership.ErrBadContent, ip, port)
	}
	p.addr = joinHostPort(ip, port)
	return p, nil
}

func joinHostPort(ip, port string) string {
	if strings.Contains(ip, ":") {
		return "[" + ip + "]:" + port
	}
	return ip + ":" + port
}

func describe(v resp.Value) string {
	if v.Kind == '*' {
		return fmt.Sprintf("an array of %d", len(v.Elems))
	}
	return fmt.Sprintf("a reply of type %q", v.Kind)
}

// listen subscribes to the Sentinel at addr's +switch-master channel and
// nudges the source at each message, reconnecting while ctx lasts.
func (s *Source) listen(ctx context.Context, addr string) {
	for wait := 100 * time.Millisecond; ctx.Err() == nil; wait = min(2*wait, 5*time.Second) {
		if s.subscribe(ctx, addr) {
			wait = 100 * time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

// subscribe holds one subscription until it fails or ctx ends; it
// reports whether it subscribed.
func (s *Source) subscribe(ctx context.Context, addr string) bool {
	dctx, cancel := context.WithTimeout(ctx, s.timeout())
	c, err := s.dial(dctx, addr)
	cancel()
	if err != nil {
		return false
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	_ = c.SetDeadline(time.Time{})
	if err := c.Send("SUBSCRIBE", "+switch-master"); err != nil {
		return false
	}
	for {
		v, err := c.Receive()
		if err != nil {
			return true
		}
		if f, ok := v.Strings(); ok && len(f) == 3 && f[0] == "message" {
			s.Nudge()
		}
	}
}
