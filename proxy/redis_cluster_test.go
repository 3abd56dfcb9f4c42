package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
	goredis "github.com/redis/go-redis/v9"
)

// clusterFleet starts three servers behind two proxies of one pool that
// answer cluster clients, each listing both; it returns the proxies, their
// addresses and a function that writes the pool's settings for a list of
// nodes and a listen address.
func clusterFleet(t *testing.T) ([]*Server, []string, func(listen string, nodes ...string) string) {
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	var addrs []string
	for _, p := range realprog.FreePorts(t, 2) {
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", p))
	}
	slices.Sort(addrs) // as the proxies list them
	yaml := func(listen string, nodes ...string) string {
		extra := "  hash_tag: \"{}\"\n  redis_cluster:\n    enabled: true\n    nodes: [" + strings.Join(nodes, ", ") + "]\n"
		return strings.Replace(redisPoolYAML(extra, rs...), "127.0.0.1:0", listen, 1)
	}
	var proxies []*Server
	for _, a := range addrs {
		proxies = append(proxies, startProxy(t, yaml(a, addrs...)))
	}
	return proxies, addrs, yaml
}

// TestRedisClusterGoRedis: go-redis's ClusterClient, given one proxy,
// finds both proxies of the fleet as the cluster's masters, spreads its
// connections over them, and its commands, transactions and pub/sub
// work; when the first proxy leaves the fleet (a reload without it), it
// answers keyed commands with MOVED, and the client follows to the other
// and goes on with every key.
func TestRedisClusterGoRedis(t *testing.T) {
	t.Parallel()
	proxies, addrs, yaml := clusterFleet(t)
	ctx := context.Background()
	c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs[:1]})
	defer c.Close()
	for i := range 200 {
		if err := c.Set(ctx, fmt.Sprint("c:", i), i, 0).Err(); err != nil {
			t.Fatalf("SET c:%d: %v", i, err)
		}
	}
	if got := masters(t, c); !slices.Equal(got, addrs) {
		t.Fatalf("the cluster's masters: %v, want the proxies %v", got, addrs)
	}
	slotMap, err := c.ClusterSlots(ctx).Result()
	if err != nil || len(slotMap) != 2 || slotMap[0].Start != 0 || slotMap[0].End != 8191 || slotMap[1].End != 16383 {
		t.Fatalf("CLUSTER SLOTS: %+v, %v", slotMap, err)
	}
	_, err = c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.Incr(ctx, "{u1}n")
		p.HSet(ctx, "{u1}h", "f", "v")
		return nil
	})
	if err != nil {
		t.Fatalf("a transaction on one slot: %v", err)
	}
	ps := c.Subscribe(ctx, "news")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Publish(ctx, "news", "hi").Result(); err != nil || n != 1 {
		t.Fatalf("PUBLISH through the cluster client: %d, %v", n, err)
	}
	if m, err := ps.ReceiveMessage(ctx); err != nil || m.Payload != "hi" {
		t.Fatalf("message: %v, %v", m, err)
	}

	// The first proxy leaves the fleet: its MOVED sends the client to the
	// other, which now holds every slot.
	reload(t, proxies[0], yaml(addrs[0], addrs[1]))
	raw := dialRedis(t, addrs[0])
	if got := raw.do("GET", "c:1"); !strings.HasPrefix(got, "-MOVED ") || !strings.HasSuffix(got, " "+addrs[1]+"\r\n") {
		t.Errorf("GET on the leaving proxy: %q, want a MOVED to %s", got, addrs[1])
	}
	if got := raw.do("PING"); got != "+PONG\r\n" {
		t.Errorf("PING on the leaving proxy: %q", got)
	}
	for i := range 200 {
		if got, err := c.Get(ctx, fmt.Sprint("c:", i)).Result(); err != nil || got != fmt.Sprint(i) {
			t.Fatalf("GET c:%d after the first proxy left: %q, %v", i, got, err)
		}
	}
	// The client's next map, from the proxy that stays, has it alone.
	c.ReloadState(ctx)
	eventually(t, "the cluster client's masters are the proxy that stays", func() bool {
		return slices.Equal(masters(t, c), addrs[1:])
	})
}

// masters returns the addresses of c's masters, sorted.
func masters(t *testing.T, c *goredis.ClusterClient) []string {
	t.Helper()
	var mu sync.Mutex
	var out []string
	err := c.ForEachMaster(context.Background(), func(ctx context.Context, m *goredis.Client) error {
		mu.Lock()
		out = append(out, m.Options().Addr)
		mu.Unlock()
		return m.Ping(ctx).Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestRedisClusterCLI: redis-cli -c follows a leaving proxy's MOVED to the
// proxy of the key's slot, and redis-cli --scan through one proxy lists
// every key of every server.
func TestRedisClusterCLI(t *testing.T) {
	t.Parallel()
	bin := realprog.Binary(t, "redis-tools", "redis-cli")
	proxies, addrs, yaml := clusterFleet(t)
	cli := func(addr string, args ...string) string {
		host, port, _ := net.SplitHostPort(addr)
		out, err := testproc.CombinedOutput(exec.Command(bin, append([]string{"-h", host, "-p", port}, args...)...))
		if err != nil {
			t.Fatalf("redis-cli %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	for i := range 100 {
		if got := cli(addrs[i%2], "-c", "SET", fmt.Sprint("k", i), fmt.Sprint(i)); got != "OK\n" {
			t.Fatalf("SET k%d: %q", i, got)
		}
	}
	lines := strings.Fields(cli(addrs[1], "--scan"))
	if len(lines) != 100 {
		t.Errorf("--scan listed %d keys, want 100", len(lines))
	}
	if got := cli(addrs[0], "CLUSTER", "INFO"); !strings.Contains(got, "cluster_state:ok") || !strings.Contains(got, "cluster_known_nodes:2") {
		t.Errorf("CLUSTER INFO: %q", got)
	}
	reload(t, proxies[0], yaml(addrs[0], addrs[1]))
	if got := cli(addrs[0], "GET", "k7"); !strings.HasPrefix(got, "MOVED ") {
		t.Errorf("GET on the leaving proxy without -c: %q, want its MOVED", got)
	}
	if got := cli(addrs[0], "-c", "GET", "k7"); got != "7\n" {
		t.Errorf("GET with -c on the leaving proxy: %q, want the value, from the other", got)
	}
}

// TestRedisClusterReplies: the proxy's CLUSTER replies are typed as
// redis-server 7.0.15 types its own (one node owning every slot, held
// beside a real cluster node's reply by the test), in RESP2 and RESP3;
// the refused subcommands say why; a pool without redis_cluster refuses
// CLUSTER as before.
func TestRedisClusterReplies(t *testing.T) {
	t.Parallel()
	r0 := startRedis(t, 0)
	node := startRedis(t, 0, "--cluster-enabled", "yes")
	if got := dialRedis(t, node.addr).do("CLUSTER", "ADDSLOTSRANGE", "0", "16383"); got != "+OK\r\n" {
		t.Fatalf("ADDSLOTSRANGE: %q", got)
	}
	s := startProxy(t, redisPoolYAML("  redis_cluster: {enabled: true}\n", r0))
	addr := s.Addr("p").String()
	host, port, _ := net.SplitHostPort(addr)
	id := nodeID(addr)
	k, d := dialRedis(t, addr), dialRedis(t, node.addr)
	// A node alone takes a moment to call its slots served.
	eventually(t, "the cluster node's state is ok", func() bool {
		return strings.Contains(d.do("CLUSTER", "INFO"), "cluster_state:ok")
	})
	_, nodePort, _ := net.SplitHostPort(node.addr)
	for _, proto := range []string{"2", "3"} {
		k.do("HELLO", proto)
		d.do("HELLO", proto)
		for _, sub := range []string{"SLOTS", "SHARDS", "KEYSLOT"} {
			args := []string{"CLUSTER", sub}
			if sub == "KEYSLOT" {
				args = append(args, "{user1}:x")
			}
			got, want := k.do(args...), d.do(args...)
			// The node's own reply names no host (it knows none), its
			// port and its ID; the proxy's names its address.
			dID := strings.Split(d.do("CLUSTER", "MYID"), "\r\n")[1]
			want = strings.ReplaceAll(want, dID, id)
			want = strings.ReplaceAll(want, ":"+nodePort+"\r\n", ":"+port+"\r\n")
			want = strings.ReplaceAll(want, "$0\r\n\r\n", fmt.Sprintf("$%d\r\n%s\r\n", len(host), host))
			if got != want {
				t.Errorf("RESP%s CLUSTER %s: %q\nredis-server's: %q", proto, sub, got, want)
			}
		}
		if got, want := k.do("CLUSTER", "INFO"), d.do("CLUSTER", "INFO"); got != want {
			t.Errorf("RESP%s CLUSTER INFO: %q\nredis-server's: %q", proto, got, want)
		}
		for _, cmd := range []string{"READONLY", "READWRITE", "ASKING"} {
			if got := k.do(cmd); got != "+OK\r\n" {
				t.Errorf("%s: %q", cmd, got)
			}
		}
	}
	if got := k.do("CLUSTER", "COUNTKEYSINSLOT", "1"); !strings.HasPrefix(got, "-ERR 'cluster|countkeysinslot' is not supported by the proxy: ") {
		t.Errorf("COUNTKEYSINSLOT: %q", got)
	}
	line := fmt.Sprintf("%s %s@0 myself,master - 0 0 0 connected 0-16383\n", id, addr)
	if got := k.do("CLUSTER", "NODES"); got != fmt.Sprintf("=%d\r\ntxt:%s\r\n", 4+len(line), line) {
		t.Errorf("CLUSTER NODES: %q", got)
	}
	plain := startProxy(t, redisPoolYAML("", r0))
	if got := dialRedis(t, plain.Addr("p").String()).do("CLUSTER", "SLOTS"); got != "-ERR 'cluster' is not supported by the proxy: cluster commands\r\n" {
		t.Errorf("CLUSTER SLOTS without redis_cluster: %q", got)
	}
}

// TestRedisClusterConfigRefused: redis_cluster in a memcached pool, an
// address a client cannot dial, a node listed twice, and nodes without
// enabled are refused, each naming the key.
func TestRedisClusterConfigRefused(t *testing.T) {
	const head = "p:\n  listen: 127.0.0.1:1\n  servers: [\"127.0.0.1:6379:1\"]\n"
	for _, tc := range []struct {
		name, yaml, key string
	}{
		{"memcached pool", "  redis_cluster: {enabled: true}\n", "redis_cluster"},
		{"no host", "  redis: true\n  redis_cluster: {enabled: true, nodes: [\":7000\"]}\n", "redis_cluster"},
		{"no port", "  redis: true\n  redis_cluster: {enabled: true, announce: \"10.0.0.1\"}\n", "redis_cluster"},
		{"bad port", "  redis: true\n  redis_cluster: {enabled: true, nodes: [\"10.0.0.1:0\"]}\n", "redis_cluster"},
		{"twice", "  redis: true\n  redis_cluster: {enabled: true, nodes: [\"10.0.0.1:7000\", \"10.0.0.1:7000\"]}\n", "redis_cluster.nodes"},
		{"not enabled", "  redis: true\n  redis_cluster: {nodes: [\"10.0.0.1:7000\"]}\n", "redis_cluster.enabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(head + tc.yaml))
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Key != tc.key {
				t.Fatalf("got %v, want an error of %s", err, tc.key)
			}
		})
	}
	if _, err := ParseConfig([]byte(head + "  redis: true\n  redis_cluster: {enabled: true, announce: \"10.0.0.1:7000\", nodes: [\"10.0.0.1:7000\", \"10.0.0.2:7000\"]}\n")); err != nil {
		t.Errorf("a fleet of two, this one announced: %v", err)
	}
}

// TestRedisClusterMovedInTransaction: a leaving proxy's MOVED to a command
// queued in a transaction fails the transaction, as a cluster node's
// does: EXEC answers -EXECABORT and nothing is written; and HELLO inside
// a transaction is refused as before, never switching the protocol then.
func TestRedisClusterMovedInTransaction(t *testing.T) {
	t.Parallel()
	r0 := startRedis(t, 0)
	s := startProxy(t, redisPoolYAML("  redis_cluster: {enabled: true, nodes: [\"127.0.0.1:1\"]}\n", r0))
	c := dialRedis(t, s.Addr("p").String())
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"SET", "k", "v"}, "-MOVED 7629 127.0.0.1:1\r\n"},
		{[]string{"HELLO", "3"}, "-ERR 'hello' inside a transaction is not supported by the proxy: it changes the connection's state\r\n"},
		{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of previous errors.\r\n"},
	} {
		if got := c.do(step.args...); got != step.want {
			t.Errorf("%q: %q, want %q", step.args, got, step.want)
		}
	}
	if got := dialRedis(t, r0.addr).do("EXISTS", "k"); got != ":0\r\n" {
		t.Errorf("the key after the aborted transaction: %q", got)
	}
}
