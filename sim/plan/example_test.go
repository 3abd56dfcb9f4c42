package plan_test

import (
	"fmt"
	"strings"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/compat/twemproxy"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/plan"
	"github.com/kolco-dev/kolco/sim/report"
	"github.com/kolco-dev/kolco/sim/theory"
	"github.com/kolco-dev/kolco/sim/trace"
)

// The article's cache example: 100 000 RPS at 95% hits, from 10 to 11
// nodes: the measured share of keys moved, and the theory's figures, which
// are the article's.
func ExampleCompute() {
	var ten []kolco.Node
	for i := range 10 {
		ten = append(ten, kolco.Node{ID: fmt.Sprintf("node-%d", i)})
	}
	for _, name := range []string{"modulo", "ring"} {
		before, err := algo.New(name, ten, algo.Options{})
		if err != nil {
			fmt.Println(err)
			return
		}
		after, err := algo.New(name, ten, algo.Options{})
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := after.Add(kolco.Node{ID: "node-10"}); err != nil {
			fmt.Println(err)
			return
		}
		cfg := plan.Config{Label: name, Before: before, After: after, Keys: keys.Synthetic(10_000),
			RPS: 100_000, HitRate: 0.95, Data: 3e12}
		if name == "modulo" { // hash % N's own closed form, not the least any placement can move
			cfg.Theory = func(b, a []kolco.Node) float64 { return theory.ModuloMoved(len(b), len(a)) }
		}
		res, err := plan.Compute(cfg)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %.1f%% moved; theory: database %.0f RPS (%.1fx), %s sent\n", name, 100*res.MovedShare,
			res.Cache.TheoryDB, res.Cache.TheoryFac, report.Bytes(res.TheoryShare*res.TotalBytes))
	}
	// Output:
	// modulo: 90.9% moved; theory: database 91364 RPS (18.3x), 2.7 TB sent
	// ring: 9.6% moved; theory: database 13636 RPS (2.7x), 272.7 GB sent
}

// The placements need not come from one algorithm and a change applied to
// it: here two twemproxy pools as nutcracker.yml describes them, before and
// after a fourth server joins. Ketama recomputes every server's points when
// the weight shares change, so besides the keys the new server takes, keys
// move between the old servers, which the plan lists flow by flow.
func ExampleCompute_twemproxy() {
	pool := func(lines ...string) *twemproxy.Pool {
		var servers []twemproxy.Server
		for _, l := range lines {
			s, err := twemproxy.ParseServer(l)
			if err != nil {
				panic(err)
			}
			servers = append(servers, s)
		}
		p, err := twemproxy.New(twemproxy.Config{Hash: "fnv1a_64", Distribution: "ketama"}, servers)
		if err != nil {
			panic(err)
		}
		return p
	}
	three := []string{"127.0.0.1:11211:1 a", "127.0.0.1:11212:2 b", "127.0.0.1:11213:1 c"}
	res, err := plan.Compute(plan.Config{
		Label:  "twemproxy",
		Before: pool(three...),
		After:  pool(append(three, "127.0.0.1:11214:1 d")...),
		Keys:   keys.Synthetic(20_000),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d keys moved (%.2f%%), the least possible %.2f%%\n", res.Moved, 100*res.MovedShare, 100*res.TheoryShare)
	for _, f := range res.Flows {
		fmt.Printf("%s -> %s: %d\n", f.From, f.To, f.Keys)
	}
	// Output:
	// 3900 keys moved (19.50%), the least possible 20.00%
	// b -> d: 1520
	// c -> d: 1120
	// a -> d: 490
	// b -> a: 340
	// c -> b: 230
	// a -> b: 100
	// b -> c: 100
}

// A canary rolled back: a fourth node joins a ring, then leaves again.
// Every key it took goes back to the node that held it before the canary
// joined, where its old copy still lies: unless deleted, those copies are
// served stale. With the canary down when it leaves, a warm change cannot
// read its keys back, and the database takes their misses.
func ExampleComputeHistory() {
	three := []kolco.Node{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	ring := func(nodes ...kolco.Node) kolco.Placement {
		p, err := algo.New("ring", nodes, algo.Options{})
		if err != nil {
			panic(err)
		}
		return p
	}
	h, err := plan.ComputeHistory(plan.Config{Keys: keys.Synthetic(10_000), RPS: 1000, HitRate: 0.9, Warm: true, Down: []string{"canary"}},
		[]kolco.Placement{ring(three...), ring(append(three, kolco.Node{ID: "canary"})...), ring(three...)})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range h.Steps {
		fmt.Printf("step %d: %d keys moved, %d back to a former owner; database %.0f RPS cold, %.0f warm\n",
			s.Step, s.Moved, s.Returned, s.Cache.DB, s.Cache.Warm.DB)
	}
	// Output:
	// step 1: 2896 keys moved, 0 back to a former owner; database 361 RPS cold, 100 warm
	// step 2: 2896 keys moved, 2896 back to a former owner; database 361 RPS cold, 361 warm
}

// A plan from a trace weighs each key by its requests per second: here
// ten seconds of reads, half of them of one hot key, the others of 97 cold
// ones, and three nodes to four. The hot key stays where it is, so the
// reads that miss right after the change are the cold keys' that move.
func ExampleCompute_traffic() {
	var b strings.Builder
	b.WriteString("#kolco-trace v1\n")
	for i := range 1000 {
		key := "hot"
		if i%2 == 1 {
			key = fmt.Sprintf("cold:%d", i%97)
		}
		fmt.Fprintf(&b, "%d.%02d %s 100 get hit\n", 1700000000+i/100, i%100, key)
	}
	r, err := trace.Open(strings.NewReader(b.String()), trace.Auto)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := trace.Summarize(r, trace.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	nodes := []kolco.Node{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	before, _ := algo.New("ring", nodes, algo.Options{})
	after, _ := algo.New("ring", nodes, algo.Options{})
	if err := after.Add(kolco.Node{ID: "d"}); err != nil {
		fmt.Println(err)
		return
	}
	res, err := plan.Compute(plan.Config{Label: "ring", Before: before, After: after, Traffic: &plan.Traffic{Profile: p, TopK: 1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	tr := res.Traffic
	fmt.Printf("%.1f reads/s over %.2f s; %d of %d keys move, %.1f reads/s of them\n", tr.ReadRPS, tr.Seconds, res.Moved, res.Keys, tr.MovedReadRPS)
	for _, n := range tr.Nodes {
		for _, h := range n.Hot {
			fmt.Printf("%s: %.1f req/s after, hottest %s at %.1f\n", n.Node, n.RPSAfter, h.Key, h.RPS)
		}
	}
	// Output:
	// 100.1 reads/s over 9.99 s; 32 of 98 keys move, 17.0 reads/s of them
	// a: 8.6 req/s after, hottest cold:19 at 0.6
	// b: 60.7 req/s after, hottest hot at 50.1
	// c: 13.8 req/s after, hottest cold:9 at 0.6
	// d: 17.0 req/s after, hottest cold:1 at 0.6
}
