package plan

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/keys"
)

// History is the plan of a sequence of changes.
type History struct {
	// Steps are the changes in order: Steps[i] goes from the placement
	// history[i] to history[i+1] of ComputeHistory, with Step = i+1.
	Steps []*Result `json:"steps"`
}

// ComputeHistory plans a sequence of changes: from history[0] to
// history[1], then to history[2], and so on, such as the successive
// versions of a configuration file. Each step is planned as Compute plans
// one change, and also counts the keys that return to a node that held
// them at an earlier step (Result.Returned): moved away by one change and
// back by a later one, they would find the copy left there, stale. cfg
// gives the sample and the cost model; its Before and After must be nil.
// The error wraps kolco.ErrBadConfig for fewer than two placements, Before
// or After set, or what Compute refuses; otherwise it is a placement's own.
func ComputeHistory(cfg Config, history []kolco.Placement) (*History, error) {
	if len(history) < 2 || cfg.Before != nil || cfg.After != nil {
		return nil, fmt.Errorf("%w: a history needs two placements or more, and no Before or After", kolco.ErrBadConfig)
	}
	ks, err := cfg.check()
	if err != nil {
		return nil, err
	}
	as, err := assignAll(ks, history...)
	if err != nil {
		return nil, err
	}
	if err := checkDown(cfg.Down, as[:len(as)-1]); err != nil {
		return nil, err
	}
	owners := globalOwners(as)
	h := &History{}
	for s := 1; s < len(as); s++ {
		res, err := compare(cfg, ks, as[s-1], as[s])
		if err != nil {
			return nil, err
		}
		res.Step = s
		returns(res, ks, owners, s)
		h.Steps = append(h.Steps, res)
	}
	return h, nil
}

// globalOwners returns the owner of every key in every assignment as an
// index into the union of their node IDs, so that owners compare across
// steps.
func globalOwners(as []keys.Assignment) [][]int32 {
	ids := map[string]int32{}
	out := make([][]int32, len(as))
	for s, a := range as {
		local := make([]int32, len(a.Nodes))
		for i, n := range a.Nodes {
			g, ok := ids[n.ID]
			if !ok {
				g = int32(len(ids))
				ids[n.ID] = g
			}
			local[i] = g
		}
		out[s] = make([]int32, len(a.Owner))
		for i, o := range a.Owner {
			out[s][i] = local[o]
		}
	}
	return out
}

// returns counts the keys of step s (owners[s-1] -> owners[s]) that move
// to a node that held them at a step before s-1, and marks their moves.
func returns(res *Result, ks *keys.Set, owners [][]int32, s int) {
	total := ks.TotalRate()
	m := 0 // walks res.Moves, which lists the moved keys in order
	for i := range owners[s] {
		from, to := owners[s-1][i], owners[s][i]
		if from == to {
			continue
		}
		back := false
		for j := 0; j < s-1 && !back; j++ {
			back = owners[j][i] == to
		}
		if back {
			res.Returned++
			res.ReturnedBytes += ks.Size(i)
			res.ReturnedRequests += ks.Rate(i) / total
		}
		if res.Moves != nil {
			res.Moves[m].Returns = back
		}
		m++
	}
}
