package groupcachepeers_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/golang/groupcache"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/groupcachepeers"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// The environment of a peer process: this test binary run again.
const (
	envSelf  = "KOLCO_GROUPCACHE_SELF"
	envNodes = "KOLCO_GROUPCACHE_NODES" // id=addr,...
)

var cfg = shards.Config{Distribution: "ring", HashTag: "{}"}

// TestMain runs a peer when the environment names one; groupcache keeps
// one peer picker and one set of groups per process, so that each peer is
// a process of its own.
func TestMain(m *testing.M) {
	if self := os.Getenv(envSelf); self != "" {
		if err := runPeer(self, os.Getenv(envNodes)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testproc.Main(m.Run))
}

func parseNodes(s string) []kolco.Node {
	var nodes []kolco.Node
	for _, f := range strings.Split(s, ",") {
		id, addr, _ := strings.Cut(f, "=")
		nodes = append(nodes, kolco.Node{ID: id, Addr: addr})
	}
	return nodes
}

// serve makes this process the peer self: its group "users" loads a key
// as "self:key", and its groups are served at its node's address. It
// returns the address's listener.
func serve(self string, nodes []kolco.Node) (net.Listener, error) {
	peers, err := groupcachepeers.New(self, cfg, nodes...)
	if err != nil {
		return nil, err
	}
	groupcache.RegisterPeerPicker(func() groupcache.PeerPicker { return peers })
	groupcache.NewGroup("users", 64<<20, groupcache.GetterFunc(func(_ context.Context, key string, dest groupcache.Sink) error {
		return dest.SetString(self + ":" + key)
	}))
	for _, n := range nodes {
		if n.ID == self {
			l, err := net.Listen("tcp", n.Addr)
			if err != nil {
				return nil, err
			}
			go http.Serve(l, peers)
			return l, nil
		}
	}
	return nil, fmt.Errorf("%s is not a node", self)
}

// runPeer serves until its standard input is closed.
func runPeer(self, nodes string) error {
	l, err := serve(self, parseNodes(nodes))
	if err != nil {
		return err
	}
	defer l.Close()
	fmt.Println("ready")
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}

func startPeer(t *testing.T, self, nodes string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envSelf+"="+self, envNodes+"="+nodes)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := testproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("peer %s: %q, %v", self, line, err)
	}
}

// TestPeersAgreeWithPlacement runs three groupcache peers, two of them in
// processes of their own, over HTTP on 127.0.0.1, and gets 1,000 keys (a
// third with hash tags) from the first: each value is loaded by the peer
// the ring places the key on, and every peer loads some.
func TestPeersAgreeWithPlacement(t *testing.T) {
	ports := realprog.FreePorts(t, 3)
	var list []string
	for i, p := range ports {
		list = append(list, fmt.Sprintf("peer-%d=127.0.0.1:%d", i, p))
	}
	nodes := strings.Join(list, ",")
	startPeer(t, "peer-1", nodes)
	startPeer(t, "peer-2", nodes)
	l, err := serve("peer-0", parseNodes(nodes))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	want, err := algo.New("ring", parseNodes(nodes), algo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	group := groupcache.GetGroup("users")
	loaders := map[string]int{}
	for i := range 1000 {
		key := fmt.Sprintf("user:%d", i)
		if i%3 == 0 {
			key = fmt.Sprintf("user:{%d}:name", i%37)
		}
		var value string
		if err := group.Get(context.Background(), key, groupcache.StringSink(&value)); err != nil {
			t.Fatalf("get %q: %v", key, err)
		}
		owner, _ := want.LocateID(shards.Tagged(key, [2]byte{'{', '}'}))
		loader, _, _ := strings.Cut(value, ":")
		if loader != owner || value != loader+":"+key {
			t.Fatalf("%q: value %q, want it loaded by %s", key, value, owner)
		}
		loaders[loader]++
	}
	if len(loaders) != 3 {
		t.Fatalf("loaded by %v: want all three peers", loaders)
	}
}
