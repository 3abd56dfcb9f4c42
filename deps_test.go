package kolco_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLibraryStaysLight checks that the library packages - what a program
// placing keys imports - pull in none of the command's or the proxy's
// dependencies.
func TestLibraryStaysLight(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	library := []string{".", "./keyhash", "./ring", "./modulo", "./slots", "./rendezvous", "./jump",
		"./jumpback", "./maglev", "./multiprobe", "./anchor", "./bounded", "./algo", "./compat/...", "./nodefile", "./sim/..."}
	out, err := exec.Command(goTool, append([]string{"list", "-deps"}, library...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, heavy := range []string{"github.com/spf13/", "yaml", "github.com/prometheus/", "gonum.org/", "github.com/redis/", "gomemcache", "/proxy", "/cmd/", "/chart"} {
			if strings.Contains(dep, heavy) {
				t.Errorf("a library package depends on %s", dep)
			}
		}
	}
}
