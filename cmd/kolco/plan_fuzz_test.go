package main

import (
	"strings"
	"testing"
)

// FuzzPlanHistoryFlags feeds kolco plan arbitrary node lists before and
// after (--nodes and two --to), --reweight and --down values: it plans
// (exit 0) or refuses them as a usage error (exit 2) on one line, never
// panics, and never fails as if running had gone wrong.
func FuzzPlanHistoryFlags(f *testing.F) {
	f.Add("a,b,c", "a,b,c,d", "a,b", "", "")          // add, then remove two
	f.Add("a,b", "a,a", "b", "", "")                  // a duplicate in --to
	f.Add("a", ",,", "a", "", "")                     // an empty --to
	f.Add("a,b", "b,c", "c", "b=2", "a")              // --reweight with --to, --down
	f.Add("x:1,y:2", "x:1", "x:1,y:2,z:3", "", "y:2") // history with --down
	f.Fuzz(func(t *testing.T, nodes, to1, to2, reweight, down string) {
		args := []string{"plan", "--keys", "50", "--nodes", nodes, "--to", to1, "--to", to2}
		if reweight != "" {
			args = append(args, "--reweight", reweight)
		}
		if down != "" {
			args = append(args, "--rps", "10", "--warm", "--down", down)
		}
		code, _, errs := runCLI(t, "", args...)
		if code != 0 && (code != 2 || strings.Count(errs, "\n") != 1) {
			t.Fatalf("%q: exit %d, stderr %q", args, code, errs)
		}
	})
}
