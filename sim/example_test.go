package sim_test

import (
	"fmt"
	"os"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/sim"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/report"
)

// An eleventh node joins ten: the share of keys each algorithm moves, on
// 20 000 keys, beside the theory's.
func ExampleRemap() {
	res, err := sim.Remap(sim.RemapConfig{
		Setups: []sim.Setup{{Algo: "ring", Opts: algo.Options{VNodes: 1000}}, {Algo: "jump"}, {Algo: "modulo"}},
		Nodes:  10, Add: 1, Sets: 1,
		Keys: keys.Synthetic(20_000),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range res.Rows {
		fmt.Printf("%s: %.1f%% moved, theory %.1f%%\n", r.Setup, 100*r.AvgMoved, 100*r.Theory)
	}
	// Output:
	// ring(V=1000): 8.8% moved, theory 9.1%
	// jump: 9.1% moved, theory 9.1%
	// modulo: 91.0% moved, theory 90.9%
}

// The weights experiment's table, as the kolco command prints it: each
// node's share against the share its weight asks for.
func ExampleWeightsResult_Tables() {
	res, err := sim.Weights(sim.WeightsConfig{
		Setups: []sim.Setup{{Algo: "rendezvous"}},
		Nodes:  []kolco.Node{{ID: "small-1"}, {ID: "small-2"}, {ID: "big", Weight: 2}},
		Keys:   keys.Synthetic(100_000),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	report.WriteText(os.Stdout, res.Tables(report.Human))
	// Output:
	// weights: requested vs obtained share, 100000 keys:
	//        setup     node  weight  requested  obtained  obtained/requested
	//   rendezvous      big    2.00     50.00%    49.61%               0.992
	//   rendezvous  small-1    1.00     25.00%    25.13%               1.005
	//   rendezvous  small-2    1.00     25.00%    25.26%               1.010
}
