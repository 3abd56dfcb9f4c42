package proxy

import (
	"os"

	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/gossip"
)

// source joins the gossip pool g describes as an observer, with the key
// file taken from dir when relative, and returns what leaves it. The
// error is a [*ConfigError] for the pool's membership key: a key file
// that cannot be read or holds no valid key, an address in use.
func (g *GossipMembership) source(pool, dir string) (membership.Source, func() error, error) {
	bad := func(err error) error { return &ConfigError{Pool: pool, Key: "membership", Err: err} }
	cfg := gossip.Config{Name: g.Name, Bind: g.Bind, Advertise: g.Advertise, Seeds: g.Seeds, Label: g.Label,
		ProbeInterval: g.ProbeInterval, ProbeTimeout: g.ProbeTimeout, GossipInterval: g.GossipInterval,
		SuspicionMult: g.SuspicionMult}
	if g.KeyFile != "" {
		data, err := os.ReadFile(inDir(dir, g.KeyFile))
		if err != nil {
			return nil, nil, bad(err)
		}
		if cfg.Keys, err = gossip.ParseKeys(data); err != nil {
			return nil, nil, bad(err)
		}
	}
	p, err := gossip.Join(cfg)
	if err != nil {
		return nil, nil, bad(err)
	}
	return p, p.Close, nil
}
