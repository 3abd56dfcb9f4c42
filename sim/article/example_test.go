package article_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/sim/article"
)

// The article's worked examples of what going from 10 to 11 nodes costs,
// with hash % N moving N/(N+1) of the keys and a ring 1/(N+1).
func ExampleCost() {
	c := article.Cost()
	fmt.Printf("cache at %.0f RPS, %.0f%% hits: database %.0f RPS steady\n", c.Cache.RPS, 100*c.Cache.HitRate, c.Cache.SteadyDB)
	fmt.Printf("  %% N: %.0f RPS (%.0fx), ring: %.0f RPS (%.1fx)\n", c.Cache.ModuloDB, c.Cache.ModuloFactor, c.Cache.RingDB, c.Cache.RingFactor)
	fmt.Printf("storage of %.0f TB: %% N sends %.1f TB, a ring %.0f GB (%.0f GB from each old node)\n",
		c.Storage.Total/1e12, c.Storage.ModuloMoved/1e12, c.Storage.RingMoved/1e9, c.Storage.RingPerNode/1e9)
	// Output:
	// cache at 100000 RPS, 95% hits: database 5000 RPS steady
	//   % N: 91364 RPS (18x), ring: 13636 RPS (2.7x)
	// storage of 3 TB: % N sends 2.7 TB, a ring 273 GB (27 GB from each old node)
}
