package plan

// CacheImpact is the seed article's cost model for a cache tier: right
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
