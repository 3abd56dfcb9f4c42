package sim

import (
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/ring"
	"github.com/kolco-dev/kolco/sim/stats"
)

// The seed article's measurement set-up: its key names, key counts, node
// names and vnode counts. Changing any of them changes the figures.
const (
	articleKeys       = 1_000_000
	articleSampleKeys = 100_000
	articleRendezvous = 200_000
	articleNameSets   = 30
	articleNodes      = 10
)

var articleVNodes = []int{1, 10, 100, 1000}

// Article holds the results of every measurement of the seed article, with
// the article's set-up: keys "user:0", "user:1", ..., nodes "node-0", ...,
// hashed with md5 in the seed-compatible ring ([ring.Seed]).
type Article struct {
	Modulo     []ModuloRow    `json:"modulo"`
	Demo       Demo           `json:"demo"`
	OneRing    []RemapRow     `json:"one_ring"`
	NameSets   []NameSetRow   `json:"name_sets"`
	Failures   []FailureRow   `json:"failures"`
	Weights    []WeightRow    `json:"weights"`
	Rendezvous RendezvousRow  `json:"rendezvous"`
	Cost       CostFigures    `json:"cost"`
	Keys       map[string]int `json:"keys"`
}

// ModuloRow is one line of the hash % N table.
type ModuloRow struct {
	Old   int     `json:"old"`
	New   int     `json:"new"`
	Moved float64 `json:"moved"`
}

// Demo is the article's three-node example: the owner of user:42 on
// cache-a, cache-b and cache-c, its two replicas, and its owner once the
// first owner is removed.
type Demo struct {
	Key      string   `json:"key"`
	Owner    string   `json:"owner"`
	Replicas []string `json:"replicas"`
	After    string   `json:"owner_after_removal"`
}

// RemapRow is one 10 -> 11 measurement on one ring.
type RemapRow struct {
	VNodes int     `json:"vnodes"`
	Moved  float64 `json:"moved"`
	ToNew  float64 `json:"to_new"`
	Donors int     `json:"donors"`
	Max    float64 `json:"max"`
	Min    float64 `json:"min"`
	Spread float64 `json:"spread"`
}

// NameSetRow summarises the 10 -> 11 measurement over 30 node name sets.
type NameSetRow struct {
	VNodes     int     `json:"vnodes"`
	MinMoved   float64 `json:"min_moved"`
	AvgMoved   float64 `json:"avg_moved"`
	MaxMoved   float64 `json:"max_moved"`
	MeanMax    float64 `json:"mean_max"`
	MeanSpread float64 `json:"mean_spread"`
}

// FailureRow is the removal of the most loaded of 10 nodes.
type FailureRow struct {
	VNodes      int     `json:"vnodes"`
	Victim      string  `json:"victim"`
	VictimShare float64 `json:"victim_share"`
	Receivers   int     `json:"receivers"`
	Worst       string  `json:"worst_receiver"`
	WorstBefore float64 `json:"worst_before"`
	WorstAfter  float64 `json:"worst_after"`
}

// WeightRow is the share of each node of a weighted ring.
type WeightRow struct {
	VNodes int       `json:"vnodes"`
	Nodes  []string  `json:"nodes"`
	Shares []float64 `json:"shares"`
}

// RendezvousRow is the article's rendezvous 10 -> 11 measurement.
type RendezvousRow struct {
	Moved float64 `json:"moved"`
	ToNew float64 `json:"to_new"`
}

// RunArticle reruns every measurement of the seed article on all cores.
// progress may be nil.
func RunArticle(progress Progress) (*Article, error) {
	a := &Article{Keys: map[string]int{
		"modulo": articleKeys, "one_ring": articleKeys, "name_sets": articleSampleKeys,
		"failures": articleKeys, "weights": articleKeys, "rendezvous": articleRendezvous,
	}}
	keys := UserKeys(articleKeys)
	hashes := HashAll(keys, keyhash.MD5)
	a.Modulo = moduloTable(hashes)
	all, sample := sortKeys(hashes), sortKeys(hashes[:articleSampleKeys])
	a.Cost = ArticleCost()

	var jobs []func() error
	jobs = append(jobs, func() (err error) { a.Demo, err = articleDemo(); return })
	a.OneRing = make([]RemapRow, len(articleVNodes))
	for i, v := range articleVNodes {
		jobs = append(jobs, func() (err error) { a.OneRing[i], err = remap(v, all, "node"); return })
	}
	sets := make([][]RemapRow, len(articleVNodes))
	for i, v := range articleVNodes {
		sets[i] = make([]RemapRow, articleNameSets)
		for s := range articleNameSets {
			jobs = append(jobs, func() (err error) {
				sets[i][s], err = remap(v, sample, "s"+strconv.Itoa(s))
				return
			})
		}
	}
	a.Failures = make([]FailureRow, 2)
	for i, v := range []int{1, 100} {
		jobs = append(jobs, func() (err error) { a.Failures[i], err = failure(v, all); return })
	}
	a.Weights = make([]WeightRow, 2)
	for i, v := range []int{1000, 100} {
		jobs = append(jobs, func() (err error) { a.Weights[i], err = weights(v, all); return })
	}
	rv, rvJobs := rendezvousRemap(keys[:articleRendezvous])
	jobs = append(jobs, rvJobs...)

	if err := runAll(jobs, progress); err != nil {
		return nil, err
	}
	for i, v := range articleVNodes {
		a.NameSets = append(a.NameSets, summarize(v, sets[i]))
	}
	a.Rendezvous = rv.row()
	return a, nil
}

// runAll runs jobs on all cores, in the order given, and returns the
// first error.
func runAll(jobs []func() error, progress Progress) error {
	var (
		mu    sync.Mutex
		next  int
		done  int
		first error
		wg    sync.WaitGroup
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(jobs) {
					return
				}
				err := jobs[i]()
				mu.Lock()
				done++
				if err != nil && first == nil {
					first = err
				}
				if progress != nil {
					progress(done, len(jobs), "article")
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

// UserKeys returns the article's keys "user:0" ... "user:n-1".
func UserKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i)
	}
	return keys
}

// HashAll hashes keys on all cores.
func HashAll(keys []string, hash keyhash.Func) []uint64 {
	out := make([]uint64, len(keys))
	workers := runtime.GOMAXPROCS(0)
	chunk := (len(keys) + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < len(keys); lo += chunk {
		hi := min(lo+chunk, len(keys))
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				out[i] = hash(keys[i])
			}
		})
	}
	wg.Wait()
	return out
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
	r, err := ring.New([]kolco.Node{{ID: "cache-a"}, {ID: "cache-b"}, {ID: "cache-c"}}, ring.Seed())
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
	d.After = after.ID
	return d, err
}

// seedRing returns the article's build_ring: nodes prefix-0 ... prefix-9
// on a seed-compatible ring with v points each.
func seedRing(v int, prefix string) (*ring.Ring, error) {
	nodes := make([]kolco.Node, articleNodes)
	for i := range nodes {
		nodes[i] = kolco.Node{ID: prefix + "-" + strconv.Itoa(i)}
	}
	cfg := ring.Seed()
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
