package plan

import (
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/keys"
)

// CacheImpact is the article's cost model for a cache tier: right
// after the change every request to a moved key misses; the others miss at
// the steady rate ([DatabaseLoad]).
type CacheImpact struct {
	// RPS and HitRate echo the configuration; SteadyDB is the database's
	// steady rate, RPS*(1-HitRate).
	RPS      float64 `json:"rps"`
	HitRate  float64 `json:"hit_rate"`
	SteadyDB float64 `json:"steady_db_rps"`
	// Cold is the share of requests to moved keys; DB the database rate
	// right after the change and Factor DB over SteadyDB.
	Cold   float64 `json:"cold_share"`
	DB     float64 `json:"db_rps_after"`
	Factor float64 `json:"factor"`
	// TheoryDB and TheoryFac are the same with the theory's moved share.
	TheoryDB  float64 `json:"theory_db_rps"`
	TheoryFac float64 `json:"theory_factor"`
	// Warm is the same change applied warm, when Config.Warm is set.
	Warm *WarmImpact `json:"warm,omitempty"`
}

// WarmImpact is the cost model of a change applied warm, as kolco proxy
// applies one: for a migration window the previous placement is kept, and
// a read that misses on a key's new owner reads its previous owner, returns
// a hit and copies it over. A moved key then misses only when the previous
// owner does not have it either - at the steady rate - or does not answer
// (Config.Down). Right after the change the database sees
// DatabaseLoad(rps, hitRate, Cold): the cold model's formula with only the
// keys of the nodes that are down counted cold. It models one window at a
// time: in a history each change is taken to start after the window of the
// one before has closed.
type WarmImpact struct {
	// Fallback is the share of requests that miss on their new owner and
	// read their previous one: the moved keys whose previous owner
	// answers. It is extra load on the cache servers, not the database.
	Fallback float64 `json:"fallback_share"`
	// Cold is the share of requests to moved keys whose previous owner is
	// down; DB the database rate right after the change and Factor DB over
	// the steady rate.
	Cold   float64 `json:"cold_share"`
	DB     float64 `json:"db_rps_after"`
	Factor float64 `json:"factor"`
	// TheoryDB and TheoryFac are the same for the least any placement
	// must lose: the keys of the down nodes that leave.
	TheoryDB  float64 `json:"theory_db_rps"`
	TheoryFac float64 `json:"theory_factor"`
}

// DatabaseLoad returns the database's request rate right after a change
// that made the share cold of the keys cold, for a uniform request rate rps
// and a steady hit rate: every request to a cold key misses, the others miss
// as usual.
func DatabaseLoad(rps, hitRate, cold float64) float64 {
	return rps*cold + rps*(1-cold)*(1-hitRate)
}

// cacheImpact applies the cost model to the measured share of requests to
// moved keys and to the theory's moved share.
func cacheImpact(rps, hitRate, cold, theoryShare float64) *CacheImpact {
	c := &CacheImpact{RPS: rps, HitRate: hitRate, SteadyDB: rps * (1 - hitRate), Cold: cold}
	c.DB = DatabaseLoad(rps, hitRate, c.Cold)
	c.TheoryDB = DatabaseLoad(rps, hitRate, theoryShare)
	if c.SteadyDB > 0 {
		c.Factor, c.TheoryFac = c.DB/c.SteadyDB, c.TheoryDB/c.SteadyDB
	}
	return c
}

// warmImpact applies the model to a change whose moved keys draw the share
// moved of the requests, downCold of them from nodes that are down, the
// least possible being theoryCold.
func warmImpact(c *CacheImpact, moved, downCold, theoryCold float64) *WarmImpact {
	w := &WarmImpact{Fallback: moved - downCold, Cold: downCold}
	w.DB = DatabaseLoad(c.RPS, c.HitRate, w.Cold)
	w.TheoryDB = DatabaseLoad(c.RPS, c.HitRate, theoryCold)
	if c.SteadyDB > 0 {
		w.Factor, w.TheoryFac = w.DB/c.SteadyDB, w.TheoryDB/c.SteadyDB
	}
	return w
}

// theoryDown returns the share of the weight before the change held by
// the down nodes that leave: whatever the placement, their keys are lost.
func theoryDown(down []string, before []kolco.Node, after keys.Assignment) float64 {
	total, lost := 0.0, 0.0
	for _, n := range before {
		total += n.EffectiveWeight()
		if slices.Contains(down, n.ID) && after.Index(n.ID) < 0 {
			lost += n.EffectiveWeight()
		}
	}
	if total == 0 {
		return 0
	}
	return lost / total
}
