package proxy

import "time"

// What a subscriber sees when the servers change: a subscription stays on
// the server it was made on, so when a server connection of the subscriber
// fails (the server died), or the pool's placement gives one of its
// channels another server (a membership change, a server ejected), the
// proxy closes the client's connection; so it does after answering a
// subscription that failed (its server down but not yet ejected) with the
// error. A client that reconnects and
// subscribes again (go-redis's PubSub, redis-py's pubsub do) subscribes
// where each channel now lives; the messages published between the close
// and its new confirmation are not delivered to it, as with any Redis
// subscriber that reconnects - pub/sub delivers at most once. The close is
// the gap's report: a client never misses messages silently while it
// stays connected. The placement is checked every subCheckInterval.

// subCheckInterval is how often a subscriber's channels are checked
// against the pool's placement: a membership change reaches a subscriber
// (as a close) within it; a check is a map walk, cheap at this rate.
const subCheckInterval = 200 * time.Millisecond

// lost ends the client, unless its subscriptions are being closed.
func (s *redisSubs) lost(sc *subConn, err error) {
	select {
	case <-s.stop:
	default:
		s.p.log.Info("a subscriber's server connection ended: the client is closed, to subscribe again",
			"server", sc.b.addr, "err", err)
		s.c.conn.Close()
	}
}

// watch closes the client when the placement gives one of its channels
// another server, or its pool is replaced by one that does (see the gap
// above).
func (s *redisSubs) watch() {
	defer s.wg.Done()
	t := time.NewTicker(subCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if moved := s.moved(); moved != "" {
			s.p.log.Info("a subscriber's channel moved: the client is closed, to subscribe again", "channel", moved)
			s.c.conn.Close()
			return
		}
	}
}

// moved returns a channel the pool now places on another server than the
// one it is subscribed on, or a pattern whose servers are no longer all
// the pool's; "" for none.
func (s *redisSubs) moved() string {
	p := s.c.pool.Load()
	var sc routeScratch
	pl := p.place.Load()
	s.subsMu.Lock()
	defer s.subsMu.Unlock()
	for _, kind := range []subKind{subChannel, subShard} {
		for name, on := range s.subs[kind] {
			owners := pl.route([]byte(name), false, &sc)
			if len(owners) == 0 || !sameServer(owners[0], on[0].b) {
				return name
			}
		}
	}
	for name, on := range s.subs[subPattern] {
		if len(on) != len(p.backends) {
			return name
		}
		for i, b := range p.backends {
			if !sameServer(b, on[i].b) {
				return name
			}
		}
	}
	return ""
}
