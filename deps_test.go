package kolco_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLibraryStaysLight checks that the library packages - what a program
// placing keys imports - pull in none of the command's, the proxy's or
// the membership sources' dependencies.
func TestLibraryStaysLight(t *testing.T) {
	library := []string{".", "./keyhash", "./ring", "./modulo", "./slots", "./rendezvous", "./jump",
		"./jumpback", "./maglev", "./multiprobe", "./anchor", "./bounded", "./algo", "./compat/...", "./nodefile", "./sim/..."}
	for _, dep := range deps(t, library...) {
		for _, heavy := range []string{"github.com/spf13/", "yaml", "github.com/prometheus/", "gonum.org/", "github.com/redis/", "gomemcache", "/proxy", "/cmd/", "/chart",
			"/membership", "go.etcd.io/", "google.golang.org/grpc", "github.com/miekg/"} {
			if strings.Contains(dep, heavy) {
				t.Errorf("a library package depends on %s", dep)
			}
		}
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
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goTool, append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}
