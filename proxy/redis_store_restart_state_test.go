package proxy

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership/etcd"
	"github.com/kolco-dev/kolco/membership/etcdtest"
)

// TestStoreStartsFromTheHistoryItServed: a store on etcd whose
// distribution depends on the history of changes (flip), started again
// while etcd is away, places every key as it did before it stopped: by the
// placement it served, restored from the state file, not one built afresh
// over the servers it served. A fault schedule (seed 193: a Redis store
// on etcd, flip, three proxies; a proxy killed and started again) saw a
// DEL answer 0 and leave the key's value in place: the restarted proxy
// sent it, before its source's first version, to the server a fresh flip
// over the same servers names, where the key was not. Here: four servers,
// one removed (the history), keys written; the proxy stops, etcd stops,
// the proxy starts again - and reads each key where the fresh placement
// puts it.
func TestStoreStartsFromTheHistoryItServed(t *testing.T) {
	t.Parallel()
	srv := etcdtest.Start(t, etcdtest.Config{})
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	st := storeFor(t, srv, "/kolco/p/")
	var add []kolco.Node
	for i, r := range rs {
		add = append(add, kolco.Node{ID: fmt.Sprintf("r%d", i), Addr: r.addr})
	}
	apply(t, st, etcd.Edit{Change: kolco.Change{Add: add}})
	dir := t.TempDir()
	y := fmt.Sprintf("kolco:\n  admin_listen: 127.0.0.1:0\n  state_file: %s\np:\n  listen: 127.0.0.1:0\n  redis: true\n"+
		"  distribution: flip\n  timeout: 2000\n  store: {enabled: true}\n  servers:\n   - %s:1 r0\n"+
		"  membership: {etcd: {endpoints: [%q], prefix: /kolco/p/, check_interval: 100, timeout: 1000, write_state: true}}\n",
		filepath.Join(dir, "state.json"), rs[0].addr, srv.Endpoint)
	s := startProxy(t, y)
	<-s.Serving()
	// The proxy writes the state of the placement over the four; the
	// removal then computes the next state from it, in etcd.
	eventually(t, "the placement state kept in etcd", func() bool {
		l, err := st.List(t.Context())
		return err == nil && l.State != nil
	})
	rev := apply(t, st, etcd.Edit{Change: kolco.Change{Remove: []string{"r1"}}})
	eventually(t, "the removal served", func() bool {
		m := membershipOf(t, s, "p")
		return m.Revision == rev && slices.Equal(m.Nodes, []string{"r0", "r2", "r3"})
	})
	waitMoved(t, s.testPool("p"))
	c := dialRedis(t, s.Addr("p").String())
	const n = 300
	for i := range n {
		if got := c.do("SET", fmt.Sprintf("k:%d", i), fmt.Sprint("v", i)); got != "+OK\r\n" {
			t.Fatalf("SET: %q", got)
		}
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv.Stop() // the proxy starts again from its state file alone
	s, logs := startProxyLogged(t, y)
	<-s.Serving()
	defer func() {
		if t.Failed() {
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "store") || strings.Contains(l, "membership") || strings.Contains(l, "placement") {
					t.Log(l)
				}
			}
		}
	}()
	c = dialRedis(t, s.Addr("p").String())
	lost := 0
	for i := range n {
		if got := c.do("GET", fmt.Sprintf("k:%d", i)); !strings.HasSuffix(got, fmt.Sprint("v", i, "\r\n")) {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d keys read nil or other values after the proxy started again from its state file", lost, n)
	}
}
