package proxy

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// redisStats are a Redis pool's request figures by command, in the same
// series as a memcached pool's (kolco_proxy_requests_total and
// kolco_proxy_request_duration_seconds, labelled with the command's name
// as redis-server names it). A pool sees few of Redis's some 240
// commands, so a command's series are made at its first request rather
// than up front.
type redisStats struct {
	m    *metrics
	pool string
	cmds []atomic.Pointer[redisCmdStats] // by redis.Command.ID
}

type redisCmdStats struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

func (m *metrics) forRedis(pool string) *redisStats {
	return &redisStats{m: m, pool: pool, cmds: make([]atomic.Pointer[redisCmdStats], redis.NumCommands())}
}

// request counts a request answered, and the time it took.
func (s *redisStats) request(cmd *redis.Command, d time.Duration) {
	p := &s.cmds[cmd.ID()]
	cs := p.Load()
	if cs == nil {
		cs = &redisCmdStats{requests: s.m.requests.WithLabelValues(s.pool, cmd.Name()),
			latency: s.m.latency.WithLabelValues(s.pool, cmd.Name())}
		if !p.CompareAndSwap(nil, cs) {
			cs = p.Load()
		}
	}
	cs.requests.Inc()
	cs.latency.Observe(d.Seconds())
}
