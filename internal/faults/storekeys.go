package faults

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/kolco-dev/kolco/internal/storecheck"
)

// storeCheck checks a store's history key by key, so that a failure names
// the keys that are not linearizable and shows their requests; with a
// failure, the first such key's history is drawn (porcupine's HTML) into
// a file under the directory dir returns, and its path returned.
//
// Each key is given 10 s first; the keys that took longer are checked
// again one at a time, each with what is left of timeout, the first three
// at least two minutes: one key with many writes of unknown outcome (each may take
// effect at any time after it was sent) took the whole shared budget of
// a loaded machine and left the next one undecided with a second (seed
// 5000).
func storeCheck(history []porcupine.Operation, timeout time.Duration, dir func() string) (res porcupine.CheckResult, why, drawn string) {
	model := storecheck.Model.ToModel()
	res = porcupine.Ok
	var bad, undecided []string
	deadline := time.Now().Add(timeout)
	var later [][]porcupine.Operation
	type checked struct {
		part []porcupine.Operation
		r    porcupine.CheckResult
		info porcupine.LinearizationInfo
	}
	var results []checked
	for _, part := range model.Partition(history) {
		r, info := porcupine.CheckOperationsVerbose(model, part, 10*time.Second)
		if r == porcupine.Unknown {
			later = append(later, part)
			continue
		}
		results = append(results, checked{part, r, info})
	}
	for i, part := range later {
		d := time.Until(deadline)
		if i < 3 {
			d = max(d, 2*time.Minute) // the first three at least; the rest within timeout
		}
		r, info := porcupine.CheckOperationsVerbose(model, part, max(d, time.Second))
		results = append(results, checked{part, r, info})
	}
	for _, c := range results {
		part, r, info := c.part, c.r, c.info
		switch r {
		case porcupine.Illegal:
			res = porcupine.Illegal
			key := part[0].Input.(storecheck.Input).Key
			if len(bad) < 3 {
				why += describeKey(key, part)
			}
			if d := dir(); drawn == "" && d != "" {
				drawn = filepath.Join(d, "history-"+strings.ReplaceAll(key, ":", "-")+".html")
				if err := porcupine.VisualizePath(model, info, drawn); err != nil {
					drawn = ""
				}
			}
			bad = append(bad, key)
		case porcupine.Unknown:
			if res == porcupine.Ok {
				res = porcupine.Unknown
			}
			undecided = append(undecided, fmt.Sprintf("%s (%d requests, %d of unknown outcome)", part[0].Input.(storecheck.Input).Key, len(part), unknownIn(part)))
		}
	}
	if len(bad) > 0 {
		why = fmt.Sprintf("not linearizable: %d keys (%s)\n%s", len(bad), strings.Join(bad, ", "), why)
	}
	if len(undecided) > 0 {
		why += fmt.Sprintf("not decided in time: %d keys: %s\n", len(undecided), strings.Join(undecided, ", "))
	}
	return res, why, drawn
}

// unknownIn counts the requests of unknown outcome in ops.
func unknownIn(ops []porcupine.Operation) int {
	n := 0
	for _, op := range ops {
		if op.Output.(storecheck.Output).Unknown {
			n++
		}
	}
	return n
}

// describeKey lists a key's requests by the time they were sent.
func describeKey(key string, ops []porcupine.Operation) string {
	ops = slices.Clone(ops)
	slices.SortStableFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	var b strings.Builder
	fmt.Fprintf(&b, "  %s, %d requests:\n", key, len(ops))
	for _, op := range ops {
		ret := "never answered"
		if op.Return < 1<<61 {
			ret = fmt.Sprintf("%.3fs", time.Duration(op.Return).Seconds())
		}
		fmt.Fprintf(&b, "    client %2d  %8.3fs .. %-14s  %s\n", op.ClientId, time.Duration(op.Call).Seconds(), ret,
			storecheck.Model.DescribeOperation(op.Input, op.Output))
	}
	return b.String()
}

// keepDir returns a directory for what a failure leaves to look at: under
// KOLCO_FAULTS_KEEP when set, else the system's temporary directory.
func keepDir(seed uint64) string {
	base := os.Getenv("KOLCO_FAULTS_KEEP")
	if base == "" {
		base = os.TempDir()
	}
	dir := filepath.Join(base, fmt.Sprintf("kolco-faults-seed-%d", seed))
	if os.MkdirAll(dir, 0o755) != nil {
		return ""
	}
	return dir
}
