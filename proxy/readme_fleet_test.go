package proxy

import (
	"os"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/membership"
)

// TestReadmeFleetExamples: every configuration the two fleet sections of
// docs/fleets.md show (the sources at a glance, and in full) is one the
// proxy accepts, each of the four sources among them, and the server file
// shown is one the file source reads.
func TestReadmeFleetExamples(t *testing.T) {
	for _, readme := range []struct{ path, heading string }{
		{"../docs/fleets.md", "A fleet: servers from a membership source"},
		{"../docs/fleets.md", "A fleet on one membership"},
	} {
		b, err := os.ReadFile(readme.path)
		if err != nil {
			t.Fatal(err)
		}
		_, section, ok := strings.Cut(string(b), "\n## "+readme.heading+"\n")
		section, _, ok2 := strings.Cut(section, "\n## ")
		if !ok || !ok2 {
			t.Fatalf("%s lacks its section %q", readme.path, readme.heading)
		}
		checkFleetExamples(t, readme.path, section)
	}
}

func checkFleetExamples(t *testing.T, path, section string) {
	sources := map[string]bool{}
	blocks := strings.Split(section, "```yaml\n")[1:]
	for _, block := range blocks {
		block, _, _ = strings.Cut(block, "```")
		if !strings.Contains(block, "membership:") {
			if nodes, err := membership.ParseNutcracker([]byte(block), ""); err != nil || len(nodes) == 0 {
				t.Errorf("the server file shown does not read (%v):\n%s", err, block)
			}
			continue
		}
		cfg, err := ParseConfig([]byte(block))
		if err != nil {
			t.Errorf("%s: %v:\n%s", path, err, block)
			continue
		}
		m := cfg.Pools["cache"].Membership
		sources[strings.Fields(m.String())[0]] = true
	}
	for _, want := range []string{"file", "dns", "etcd", "gossip"} {
		if !sources[want] {
			t.Errorf("%s: no %s example among %d blocks", path, want, len(blocks))
		}
	}
}
