package dns_test

import (
	"context"
	"log"

	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/dns"
)

// A program in a Kubernetes cluster follows the pods of a StatefulSet's
// headless service, named mc-0.mc.default.svc.cluster.local and so on.
// (Not run here: it needs the cluster's DNS.)
func Example() {
	w := membership.Watch(context.Background(), &dns.Source{
		Name: "_memcache._tcp.mc.default.svc.cluster.local.",
	})
	defer w.Close()
	for v := range w.Versions() {
		log.Printf("%v", v) // change the placement to v.Nodes here
	}
}
