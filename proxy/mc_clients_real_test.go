package proxy

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// runTool runs a load tool with a time limit and returns its output. The
// limit is a bound on a run that must end, not a measure of its speed: it
// scales with the load (at load 44-75 on two cores memcslap's 4000 sets
// took 19 s, and its gets were killed at a fixed 30 s).
func runTool(t *testing.T, bin string, args ...string) string {
	t.Helper()
	limit := time.Duration(float64(30*time.Second) * realprog.Busy())
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	out, err := testproc.CombinedOutput(exec.CommandContext(ctx, bin, args...))
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestMemcslapThroughProxy runs libmemcached's memcslap (set, get and
// multi-get) through the proxy to three servers.
func TestMemcslapThroughProxy(t *testing.T) {
	t.Parallel()
	bin := needBinary(t, "memcslap")
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	s := startProxy(t, poolYAML("", ms...))
	addr := s.Addr("p").String()
	for _, test := range []string{"set", "get", "mget"} {
		out := runTool(t, bin, "--servers="+addr, "--test="+test, "--concurrency=2", "--execute-number=2000")
		t.Logf("memcslap %s: %s", test, strings.Join(strings.Fields(out), " "))
	}
	if st := s.testPool("p").stats; st.clientErrs.Load() != 0 {
		t.Fatalf("memcslap caused %d client errors", st.clientErrs.Load())
	}
}

// TestMemcaslapVerifies runs memcaslap with data verification and
// multi-gets through the proxy: no verification may fail.
func TestMemcaslapVerifies(t *testing.T) {
	t.Parallel()
	bin := needBinary(t, "memcaslap")
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	s := startProxy(t, poolYAML("", ms...))
	out := runTool(t, bin, "-s", s.Addr("p").String(), "-T", "1", "-c", "8", "-x", "20000", "-v", "0.2", "-d", "4")
	if m := regexp.MustCompile(`(?m)^cmd_get:\s*(\d+)`).FindStringSubmatch(out); m == nil || m[1] == "0" {
		t.Fatalf("memcaslap did no gets:\n%s", out)
	}
	for _, bad := range regexp.MustCompile(`(?m)^(get_misses|verify_failed|expired_get|unexpired_unget):\s*(\d+)`).FindAllStringSubmatch(out, -1) {
		if bad[1] == "verify_failed" && bad[2] != "0" {
			t.Fatalf("memcaslap: %s = %s\n%s", bad[1], bad[2], out)
		}
	}
	t.Logf("%s", out)
}
