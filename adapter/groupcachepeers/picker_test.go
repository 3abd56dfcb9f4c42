package groupcachepeers_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/golang/groupcache"
	"github.com/golang/groupcache/consistenthash"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/groupcachepeers"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/algo"
)

func peerNodes(n int) []kolco.Node {
	nodes := make([]kolco.Node, n)
	for i := range nodes {
		nodes[i] = kolco.Node{ID: fmt.Sprintf("peer-%02d", i), Addr: fmt.Sprintf("http://10.0.0.%d:8000", i+1)}
	}
	return nodes
}

// TestPickPeer checks that a key this peer owns is not sent anywhere and
// any other goes to its owner, and that an update is a change.
func TestPickPeer(t *testing.T) {
	nodes := peerNodes(4)
	p, err := groupcachepeers.New("peer-01", shards.Config{Distribution: "jump"}, nodes...)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := algo.New("jump", nodes, algo.Options{})
	check := func() {
		t.Helper()
		for i := range 1000 {
			key := fmt.Sprint("k", i)
			owner, _ := want.LocateIndex(key)
			peer, ok := p.PickPeer(key)
			if mine := p.Table().Node(owner).ID == "peer-01"; ok == mine || ok && peer != p.Table().Value(owner) {
				t.Fatalf("%q: PickPeer %v, %v; owner %s", key, peer, ok, p.Table().Node(owner).ID)
			}
		}
	}
	check()
	if err := p.Update(nodes[:3]...); err != nil {
		t.Fatal(err)
	}
	if err := want.Remove("peer-03"); err != nil {
		t.Fatal(err)
	}
	check()
	if err := p.Update(nodes[2:]...); !errors.Is(err, groupcachepeers.ErrNotMember) {
		t.Fatalf("update without this peer: %v", err)
	}
	if _, err := groupcachepeers.New("nobody", shards.Config{}, nodes...); !errors.Is(err, groupcachepeers.ErrNotMember) {
		t.Fatalf("New for a peer not among the nodes: %v", err)
	}
	bad := append(peerNodes(1), kolco.Node{ID: "x", Addr: "http://"})
	if _, err := groupcachepeers.New("peer-00", shards.Config{}, bad...); !errors.Is(err, kolco.ErrBadConfig) {
		t.Fatalf("New with a peer without a host: %v", err)
	}
}

// TestServeHTTPBadPaths checks that a request outside the base path, or
// without a group, is refused, not a panic, and an unknown group is not
// found.
func TestServeHTTPBadPaths(t *testing.T) {
	p, err := groupcachepeers.New("peer-00", shards.Config{}, peerNodes(2)...)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{
		"/elsewhere/users/k":           http.StatusNotFound,
		"/_groupcache/":                http.StatusNotFound,
		"/_groupcache/users":           http.StatusNotFound,
		"/_groupcache//k":              http.StatusNotFound,
		"/_groupcache/no-such-group/k": http.StatusNotFound,
	} {
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://x"+path, nil))
		if rec.Code != want {
			t.Errorf("%s: status %d, want %d", path, rec.Code, want)
		}
	}
}

// TestGetFromPeerErrors checks a peer answering an error status, and one
// answering bytes that are not a GetResponse.
func TestGetFromPeerErrors(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"status":  func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) },
		"garbage": func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte{0xff, 0xff, 0xff}) },
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			nodes := []kolco.Node{{ID: "me", Addr: "http://127.0.0.1:1"}, {ID: "other", Addr: srv.URL}}
			p, err := groupcachepeers.New("me", shards.Config{}, nodes...)
			if err != nil {
				t.Fatal(err)
			}
			var peer groupcache.ProtoGetter
			for i := 0; peer == nil; i++ {
				peer, _ = p.PickPeer(fmt.Sprint("k", i))
			}
			group, key := "g", "k"
			if err := peer.Get(context.Background(), &pbRequest{Group: &group, Key: &key}, &pbResponse{}); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

var sinkPeer groupcache.ProtoGetter

func TestPickPeerDoesNotAllocate(t *testing.T) {
	p, err := groupcachepeers.New("peer-00", shards.Config{HashTag: "{}"}, peerNodes(10)...)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(1000, func() { sinkPeer, _ = p.PickPeer("user:{42}:name") }); n != 0 {
		t.Fatalf("%v allocations per PickPeer", n)
	}
}

var sinkString string

// BenchmarkPickPeer compares, over 10 peers, the bare placement, the
// picker, and HTTPPool's own consistent hash (crc32, 50 points a peer).
func BenchmarkPickPeer(b *testing.B) {
	nodes := peerNodes(10)
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("user:%d:profile", i)
	}
	bare, _ := algo.New("ring", nodes, algo.Options{})
	b.Run("ring/placement", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			sinkString, _ = bare.LocateID(keys[i&1023])
		}
	})
	p, _ := groupcachepeers.New("peer-00", shards.Config{}, nodes...)
	b.Run("ring/adapter", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			sinkPeer, _ = p.PickPeer(keys[i&1023])
		}
	})
	m := consistenthash.New(50, nil)
	for _, n := range nodes {
		m.Add(n.Addr)
	}
	b.Run("httppool-consistenthash", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			sinkString = m.Get(keys[i&1023])
		}
	})
}
