package sim_test

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/report"
)

// The seed article's cache example: 100 000 RPS at 95% hits, from 10 to 11
// nodes. The theory columns are its figures.
func ExamplePlan() {
	var ten []kolco.Node
	for i := range 10 {
		ten = append(ten, kolco.Node{ID: fmt.Sprintf("node-%d", i)})
	}
	for _, algo := range []string{"modulo", "ring"} {
		res, err := sim.Plan(sim.PlanConfig{
			Setup:  sim.Setup{Algo: algo},
			Before: ten,
			Add:    []kolco.Node{{ID: "node-10"}},
			Keys:   keys.Synthetic(10_000),
			RPS:    100_000, HitRate: 0.95,
			Data: 3e12,
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: database %.0f RPS (%.1fx), %s sent\n", algo, res.Cache.TheoryDB, res.Cache.TheoryFac,
			report.Bytes(res.TheoryShare*res.TotalBytes))
	}
	// Output:
	// modulo: database 91364 RPS (18.3x), 2.7 TB sent
	// ring: database 13636 RPS (2.7x), 272.7 GB sent
}
