package kolco_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/internal/testproc"
)

// heavy are the dependencies of the command, the proxy, the membership
// sources and the client adapters, which no library package may pull in.
var heavy = []string{"github.com/spf13/", "yaml", "github.com/prometheus/", "gonum.org/", "github.com/redis/", "gomemcache", "/proxy", "/cmd/", "/chart",
	"/membership", "go.etcd.io/", "google.golang.org/grpc", "github.com/miekg/", "github.com/golang/groupcache", "github.com/golang/protobuf",
	"github.com/hashicorp/", "/adapter/"}

// TestLibraryStaysLight checks that the library packages - what a program
// placing keys imports - pull in none of the command's, the proxy's or
// the membership sources' dependencies. The compat registry reads
// nutcracker.yml and so may pull in YAML, and nothing else heavy; the
// systems' own packages may not.
func TestLibraryStaysLight(t *testing.T) {
	systems := slices.DeleteFunc(goList(t, "./compat/..."), func(p string) bool { return p == module+"/compat" })
	library := append([]string{".", "./keyhash", "./ring", "./modulo", "./slots", "./rendezvous", "./jump",
		"./jumpback", "./jumpbackanchor", "./maglev", "./multiprobe", "./anchor", "./bounded", "./algo", "./nodefile", "./sim/..."}, systems...)
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

// clients are the Go clients the adapters serve, each by its package.
var clients = map[string]string{
	"./adapter/gomemcache":      "github.com/bradfitz/gomemcache",
	"./adapter/goredis":         "github.com/redis/go-redis",
	"./adapter/groupcachepeers": "github.com/golang/groupcache",
	"./adapter/grpcbalancer":    "google.golang.org/grpc",
}

// TestAdaptersStayApart checks that an adapter pulls in its own client
// and no other, nor the proxy, the command or the etcd client: a program
// using go-redis through kolco links neither gRPC nor memcached's client.
func TestAdaptersStayApart(t *testing.T) {
	for pkg, own := range clients {
		t.Run(pkg, func(t *testing.T) {
			ds := deps(t, pkg)
			if !slices.ContainsFunc(ds, func(d string) bool { return strings.HasPrefix(d, own) }) {
				t.Errorf("%s does not depend on %s: the table is stale", pkg, own)
			}
			for other, client := range clients {
				for _, d := range ds {
					if other != pkg && strings.HasPrefix(d, client) || strings.Contains(d, "go.etcd.io/") ||
						strings.Contains(d, "/proxy") || strings.Contains(d, "/cmd/") {
						t.Errorf("%s depends on %s", pkg, d)
					}
				}
			}
		})
	}
}

// TestLightSourcesStayLight checks that following a file or DNS pulls in
// neither the etcd client nor gRPC nor memberlist: only packages
// membership/etcd and membership/gossip do.
// The DNS source uses the standard resolver; its tests' DNS server is
// theirs alone.
func TestLightSourcesStayLight(t *testing.T) {
	for _, dep := range deps(t, "./membership", "./membership/dns") {
		for _, heavy := range []string{"go.etcd.io/", "google.golang.org/grpc", "github.com/miekg/", "/membership/etcd",
			"github.com/hashicorp/", "/membership/gossip"} {
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
	out, err := testproc.CombinedOutput(exec.Command(goTool, append([]string{"list"}, args...)...))
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}
