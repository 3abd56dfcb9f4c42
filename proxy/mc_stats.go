package proxy

import (
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// appendStats appends the reply to "stats": the pool's own figures, in
// memcached's STAT format.
func (p *pool) appendStats(dst []byte) []byte {
	s := p.stats
	u := func(name string, v uint64) { dst = memcache.AppendStat(dst, name, v) }
	u("uptime", uint64(time.Since(s.started).Seconds()))
	u("time", uint64(time.Now().Unix()))
	u("curr_connections", uint64(max(s.currConns.Load(), 0)))
	u("total_connections", uint64(s.totalConns.Load()))
	u("rejected_connections", uint64(s.rejectedConns.Load()))
	u("client_errors", s.clientErrs.Load())
	var total uint64
	for c := range s.cmds {
		total += s.cmds[c].Load()
	}
	u("cmd_total", total)
	u("cmd_get", s.cmds[memcache.CmdGet].Load()+s.cmds[memcache.CmdGets].Load()+s.cmds[memcache.CmdMetaGet].Load())
	u("cmd_set", s.cmds[memcache.CmdSet].Load()+s.cmds[memcache.CmdMetaSet].Load())
	u("cmd_touch", s.cmds[memcache.CmdTouch].Load())
	// Servers not marked down: under fail-fast and with replicas, the
	// placement keeps down servers in their places, so its length is not
	// the count.
	live := 0
	for _, b := range p.backends {
		if !b.health.isDown() {
			live++
		}
	}
	u("servers", uint64(len(p.backends)))
	u("servers_live", uint64(live))
	for _, b := range p.backends {
		prefix := "server:" + b.spec.RingName() + ":"
		u(prefix+"requests", b.stats.requests.Load())
		u(prefix+"errors", b.stats.errors.Load())
		u(prefix+"ejections", b.stats.ejections.Load())
		down := uint64(0)
		if b.health.isDown() {
			down = 1
		}
		u(prefix+"down", down)
	}
	return append(dst, "END\r\n"...)
}
