package proxy

import "time"

// StateMissing says that a pool of a history-dependent distribution (jump,
// jumpback, anchor, slots) started without the record of its placement's
// history while its servers held data. Such a placement depends on the
// changes that led to it; placed afresh over the same servers, keys can
// sit elsewhere than where they were written, and a read of one that moved
// misses until it is written again.
type StateMissing struct {
	// Why is what was missing: the state file, the pool's record in it,
	// or a record of the pool's placement settings.
	Why string `json:"why"`
	// Items is how many items the servers held when the pool started
	// (memcached's curr_items, Redis's DBSIZE).
	Items int64     `json:"items"`
	Since time.Time `json:"since"`
}

// checkAfresh counts the items the pool's servers hold, once, after the
// pool started placing keys afresh for why, and when they hold any,
// records it (the status page, /v1/pools and kolco_proxy_state_missing say
// so) and logs a warning. Servers that do not answer are asked again,
// a few times.
func (p *pool) checkAfresh(why string) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		var items int64
		answered := 0
		for _, b := range p.backends {
			for try := 0; try < 3; try++ {
				n, err := p.front.items(p.ctx, b)
				if err == nil {
					items += n
					answered++
					break
				}
				select {
				case <-p.ctx.Done():
					return
				case <-time.After(time.Second):
				}
			}
		}
		switch {
		case answered > 0 && items == 0:
			p.log.Debug("pool started without its placement history; its servers hold no data", "why", why)
		case answered == 0:
			p.log.Warn("pool started without its placement history, and no server answered to say whether it holds data", "why", why)
		case items > 0:
			p.stats.stateMissing.Store(&StateMissing{Why: why, Items: items, Since: time.Now()})
			p.log.Warn("pool started without its placement history while its servers hold data: keys are placed afresh, and reads of those that moved miss; "+
				"if the pool ran before, stop the proxy, put the state file back (from a backup or a proxy beside it) and start again",
				"why", why, "items", items, "distribution", p.cfg.Distribution)
		}
	}()
}
