package kolco_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// heavy are the dependencies of the command, the proxy and the membership
// sources, which no library package may pull in.
var heavy = []string{"github.com/spf13/", "yaml", "github.com/prometheus/", "gonum.org/", "github.com/redis/", "gomemcache", "/proxy", "/cmd/", "/chart",
	"/membership", "go.etcd.io/", "google.golang.org/grpc", "github.com/miekg/"}

// TestLibraryStaysLight checks that the library packages - what a program
// placing keys imports - pull in none of the command's, the proxy's or
// the membership sources' dependencies. The compat registry reads
// nutcracker.yml and so may pull in YAML, and nothing else heavy; the
// systems' own packages may not.
func TestLibraryStaysLight(t *testing.T) {
	systems := slices.DeleteFunc(goList(t, "./compat/..."), func(p string) bool { return p == module+"/compat" })
	library := append([]string{".", "./keyhash", "./ring", "./modulo", "./slots", "./rendezvous", "./jump",
		"./jumpback", "./maglev", "./multiprobe", "./anchor", "./bounded", "./algo", "./nodefile", "./sim/..."}, systems...)
	for _, c := range []struct {
		name     string
		packages []string
		allowed  string
	}{
		{"library", library, ""},
		{"compat registry", []string{"./compat"}, "yaml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, dep := range deps(t, c.packages...) {
				for _, h := range heavy {
					if h != c.allowed && strings.Contains(dep, h) {
						t.Errorf("%s depends on %s", c.name, dep)
					}
				}
			}
		})
	}
}

// TestLightSourcesStayLight checks that following a file or DNS pulls in
// neither the etcd client nor gRPC: only package membership/etcd does.
// The DNS source uses the standard resolver; its tests' DNS server is
// theirs alone.
func TestLightSourcesStayLight(t *testing.T) {
	for _, dep := range deps(t, "./membership", "./membership/dns") {
		for _, heavy := range []string{"go.etcd.io/", "google.golang.org/grpc", "github.com/miekg/", "/membership/etcd"} {
			if strings.Contains(dep, heavy) {
				t.Errorf("a file or DNS membership source depends on %s", dep)
			}
		}
	}
}

// deps returns the packages that pkgs depend on, themselves included.
func deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	return goList(t, append([]string{"-deps"}, pkgs...)...)
}

// goList returns the packages "go list" lists for args.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goTool, append([]string{"list"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}
