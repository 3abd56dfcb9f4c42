package proxy

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeCheckOutput: the --check output docs/proxy.md shows is what
// the proxy prints for the pool it shows.
func TestReadmeCheckOutput(t *testing.T) {
	b, err := os.ReadFile("../docs/proxy.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	const cmd = "$ kolco proxy --check --config /etc/nutcracker/nutcracker.yml\n"
	_, shown, ok := strings.Cut(readme, cmd)
	shown, _, ok2 := strings.Cut(shown, "```")
	_, yaml, ok3 := strings.Cut(readme, "holds this twemproxy pool, unchanged:\n\n```yaml\n")
	yaml, _, ok4 := strings.Cut(yaml, "```")
	if !ok || !ok2 || !ok3 || !ok4 {
		t.Fatal("docs/proxy.md lacks the --check example or its pool")
	}
	cfg, err := ParseConfig([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := cfg.Explain(&out); err != nil {
		t.Fatal(err)
	}
	if out.String() != shown {
		t.Errorf("docs/proxy.md shows:\n%s\nkolco proxy --check prints:\n%s", shown, out.String())
	}
}
