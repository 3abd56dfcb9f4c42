package etcd_test

import (
	"context"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/etcd"
)

// A proxy or client follows the membership under a prefix. (Not run
// here: it needs an etcd server; the package's tests start one.)
func Example() {
	store, err := etcd.New(etcd.Config{Endpoints: []string{"http://127.0.0.1:2379"}, Prefix: "/kolco/cache/"})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	w := membership.Watch(context.Background(), store)
	defer w.Close()
	for v := range w.Versions() {
		log.Printf("%v", v) // change the placement to v.Nodes here
	}
}

// A client places keys as every other follower of the membership does:
// the follower applies each change as it comes, and its fingerprint says
// whether it agrees with the rest of the fleet. (Not run here: it needs an
// etcd server; the package's tests start one.)
func Example_follow() {
	store, err := etcd.New(etcd.Config{Endpoints: []string{"http://127.0.0.1:2379"}, Prefix: "/kolco/cache/"})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	f, err := membership.Follow(context.Background(), store, membership.FollowConfig{Algorithm: "jump"})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := f.WaitRevision(ctx, 1); err != nil { // the first version read
		log.Fatal(err)
	}
	node, err := f.Placement().Locate("user:42") // no lock: call it on every request
	if err != nil {
		log.Fatal(err)
	}
	st := f.Report()
	log.Printf("user:42 on %s; revision %d, fingerprint %s, stale %v", node.ID, st.Revision, st.Fingerprint, st.Stale)
}

// An operator's tool adds a node; a concurrent change makes Update read
// the membership again and retry.
func ExampleStore_Update() {
	store, err := etcd.New(etcd.Config{Endpoints: []string{"http://127.0.0.1:2379"}, Prefix: "/kolco/cache/"})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	rev, err := store.Update(context.Background(), func(etcd.Listing) (etcd.Edit, error) {
		return etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "cache-d", Addr: "10.0.0.4:11211"}}}}, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("cache-d added at revision %d", rev)
}

// A sidecar registers the memcached beside it for as long as it runs.
func ExampleStore_Register() {
	store, err := etcd.New(etcd.Config{Endpoints: []string{"http://127.0.0.1:2379"}, Prefix: "/kolco/cache/"})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	reg, err := store.Register(ctx, kolco.Node{ID: "cache-e", Addr: "10.0.0.5:11211"}, 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	<-ctx.Done()
	closing, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	reg.Close(closing) // leave at once rather than when the lease expires
}
