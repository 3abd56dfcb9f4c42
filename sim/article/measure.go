package article

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/rendezvous"
	"github.com/kolco-dev/kolco/ring"
	"github.com/kolco-dev/kolco/sim/stats"
)

// remap is the article's measure(): ten nodes, then an eleventh.
func remap(v int, ks keySet, prefix string) (RemapRow, error) {
	row := RemapRow{VNodes: v}
	r, err := articleRing(v, prefix)
	if err != nil {
		return row, err
	}
	before, err := place(r, ks)
	if err != nil {
		return row, err
	}
	newNode := fmt.Sprintf("%s-%d", prefix, articleNodes)
	if err := r.Add(kolco.Node{ID: newNode}); err != nil {
		return row, err
	}
	after, err := place(r, ks)
	if err != nil {
		return row, err
	}
	trans, newIdx := before.translate(after), after.index(newNode)
	moved, toNew := 0, 0
	donors := make([]bool, len(before.nodes))
	load := make([]int, len(before.nodes))
	for i, b := range before.owner {
		load[b]++
		if a := after.owner[i]; trans[b] != a {
			moved++
			donors[b] = true
			if a == newIdx {
				toNew++
			}
		}
	}
	counts := make([]int, articleNodes)
	for i := range counts {
		counts[i] = load[before.index(prefix+"-"+strconv.Itoa(i))]
	}
	n := float64(len(ks.hashes))
	avg := n / articleNodes
	row.Moved = float64(moved) / n
	row.ToNew = float64(toNew) / float64(max(moved, 1))
	for _, d := range donors {
		if d {
			row.Donors++
		}
	}
	row.Max = float64(slices.Max(counts)) / avg
	row.Min = float64(slices.Min(counts)) / avg
	row.Spread = stats.PStdev(counts) / avg
	return row, nil
}

// failure removes the most loaded of ten nodes and reports who absorbs it.
func failure(v int, ks keySet) (FailureRow, error) {
	row := FailureRow{VNodes: v}
	r, err := articleRing(v, "node")
	if err != nil {
		return row, err
	}
	before, err := place(r, ks)
	if err != nil {
		return row, err
	}
	load := newTally(len(before.nodes))
	for i, b := range before.owner {
		load.add(b, ks.pos[i])
	}
	victim := load.mostCommon()
	if err := r.Remove(before.nodes[victim]); err != nil {
		return row, err
	}
	after, err := place(r, ks)
	if err != nil {
		return row, err
	}
	trans := before.translate(after)
	received := newTally(len(after.nodes))
	for i, b := range before.owner {
		if a := after.owner[i]; trans[b] != a {
			received.add(a, ks.pos[i])
		}
	}
	worst := received.mostCommon()
	if worst < 0 {
		return row, fmt.Errorf("sim: removing %s moved no key", before.nodes[victim])
	}
	worstBefore := load.count[before.index(after.nodes[worst])]
	n := float64(len(ks.hashes))
	row.Victim = before.nodes[victim]
	row.VictimShare = float64(load.count[victim]) / n
	row.Receivers = received.seen()
	row.Worst = after.nodes[worst]
	row.WorstBefore = float64(worstBefore) / n
	row.WorstAfter = float64(worstBefore+received.count[worst]) / n
	return row, nil
}

// weights measures the shares of small-1, small-2 and big (weight 2).
func weights(v int, ks keySet) (WeightRow, error) {
	row := WeightRow{VNodes: v, Nodes: []string{"small-1", "small-2", "big"}}
	cfg := ring.ArticleConfig()
	cfg.VNodes = v
	r, err := ring.New([]kolco.Node{{ID: "small-1"}, {ID: "small-2"}, {ID: "big", Weight: 2}}, cfg)
	if err != nil {
		return row, err
	}
	p, err := place(r, ks)
	if err != nil {
		return row, err
	}
	load := make([]int, len(p.nodes))
	for _, o := range p.owner {
		load[o]++
	}
	for _, id := range row.Nodes {
		row.Shares = append(row.Shares, float64(load[p.index(id)])/float64(len(ks.hashes)))
	}
	return row, nil
}

// rendezvousCount accumulates the rendezvous measurement over key chunks.
type rendezvousCount struct {
	keys, moved, toNew atomic.Int64
}

func (c *rendezvousCount) row() RendezvousRow {
	moved := c.moved.Load()
	return RendezvousRow{
		Moved: float64(moved) / float64(c.keys.Load()),
		ToNew: float64(c.toNew.Load()) / float64(max(moved, 1)),
	}
}

// rendezvousRemap is the article's one-line rendezvous: the node with the
// largest md5 of "node:key", measured from 10 to 11 nodes. It returns one
// job per chunk of keys so that the md5 work spreads over all cores.
func rendezvousRemap(keys []string) (*rendezvousCount, []func() error) {
	c := &rendezvousCount{}
	nodes := make([]kolco.Node, articleNodes+1)
	for i := range nodes {
		nodes[i] = kolco.Node{ID: "node-" + strconv.Itoa(i)}
	}
	cfg := rendezvous.Config{Hash: keyhash.MD5, Separator: ":"}
	chunk := (len(keys) + 4*runtime.GOMAXPROCS(0) - 1) / (4 * runtime.GOMAXPROCS(0))
	var jobs []func() error
	for lo := 0; lo < len(keys); lo += chunk {
		part := keys[lo:min(lo+chunk, len(keys))]
		jobs = append(jobs, func() error {
			before, err := rendezvous.New(nodes[:articleNodes], cfg)
			if err != nil {
				return err
			}
			after, err := rendezvous.New(nodes, cfg)
			if err != nil {
				return err
			}
			var moved, toNew int64
			for _, k := range part {
				b, err := before.Locate(k)
				if err != nil {
					return err
				}
				a, err := after.Locate(k)
				if err != nil {
					return err
				}
				if a.ID != b.ID {
					moved++
					if a.ID == nodes[articleNodes].ID {
						toNew++
					}
				}
			}
			c.keys.Add(int64(len(part)))
			c.moved.Add(moved)
			c.toNew.Add(toNew)
			return nil
		})
	}
	return c, jobs
}

func moduloTable(hashes []uint64) []ModuloRow {
	var rows []ModuloRow
	for _, c := range [][2]uint64{{10, 11}, {10, 9}, {100, 101}, {10, 20}} {
		moved := 0
		for _, h := range hashes {
			if h%c[0] != h%c[1] {
				moved++
			}
		}
		rows = append(rows, ModuloRow{int(c[0]), int(c[1]), float64(moved) / float64(len(hashes))})
	}
	return rows
}

func articleDemo() (Demo, error) {
	d := Demo{Key: "user:42"}
	r, err := ring.New([]kolco.Node{{ID: "cache-a"}, {ID: "cache-b"}, {ID: "cache-c"}}, ring.ArticleConfig())
	if err != nil {
		return d, err
	}
	owner, err := r.Locate(d.Key)
	if err != nil {
		return d, err
	}
	d.Owner = owner.ID
	two, err := r.LocateN(nil, d.Key, 2)
	if err != nil {
		return d, err
	}
	for _, n := range two {
		d.Replicas = append(d.Replicas, n.ID)
	}
	if err := r.Remove(owner.ID); err != nil {
		return d, err
	}
	after, err := r.Locate(d.Key)
	if err != nil {
		return d, err
	}
	d.After = after.ID
	return d, nil
}

// articleRing returns the article's build_ring: nodes prefix-0 ... prefix-9
// on the article's ring with v points each.
func articleRing(v int, prefix string) (*ring.Ring, error) {
	nodes := make([]kolco.Node, articleNodes)
	for i := range nodes {
		nodes[i] = kolco.Node{ID: prefix + "-" + strconv.Itoa(i)}
	}
	cfg := ring.ArticleConfig()
	cfg.VNodes = v
	return ring.New(nodes, cfg)
}

func summarize(v int, runs []RemapRow) NameSetRow {
	moved := make([]float64, len(runs))
	maxes := make([]float64, len(runs))
	spreads := make([]float64, len(runs))
	for i, r := range runs {
		moved[i], maxes[i], spreads[i] = r.Moved, r.Max, r.Spread
	}
	return NameSetRow{
		VNodes:     v,
		MinMoved:   slices.Min(moved),
		AvgMoved:   stats.Mean(moved),
		MaxMoved:   slices.Max(moved),
		MeanMax:    stats.Mean(maxes),
		MeanSpread: stats.Mean(spreads),
	}
}
