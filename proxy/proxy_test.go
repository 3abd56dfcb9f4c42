package proxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// TestCommands runs every classic command through the proxy to three
// memcached servers and checks the replies memcached defines.
func TestCommands(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	s := startProxy(t, poolYAML("", ms...))
	c := dial(t, s.Addr("p").String())
	steps := []struct{ req, want string }{
		{"set a 5 0 3\r\nabc\r\n", "STORED\r\n"},
		{"get a\r\n", "VALUE a 5 3\r\nabc\r\nEND\r\n"},
		{"add a 0 0 1\r\nx\r\n", "NOT_STORED\r\n"},
		{"replace a 0 0 1\r\nx\r\n", "STORED\r\n"},
		{"append a 0 0 2\r\nyz\r\n", "STORED\r\n"},
		{"prepend a 0 0 1\r\nw\r\n", "STORED\r\n"},
		{"get a\r\n", "VALUE a 0 4\r\nwxyz\r\nEND\r\n"},
		{"replace nosuch 0 0 1\r\nx\r\n", "NOT_STORED\r\n"},
		{"set n 0 0 2\r\n10\r\n", "STORED\r\n"},
		{"incr n 5\r\n", "15\r\n"},
		{"decr n 20\r\n", "0\r\n"},
		{"incr nosuch 1\r\n", "NOT_FOUND\r\n"},
		{"touch n 100\r\n", "TOUCHED\r\n"},
		{"gat 100 n\r\n", "VALUE n 0 2\r\n0 \r\nEND\r\n"}, // memcached pads a decremented number
		{"delete n\r\n", "DELETED\r\n"},
		{"delete n\r\n", "NOT_FOUND\r\n"},
		{"get n\r\n", "END\r\n"},
		{"version\r\n", dial(t, ms[0].addr).do("version\r\n")}, // a server's own
		{"verbosity 1\r\n", "OK\r\n"},
		{"flush_all\r\n", "SERVER_ERROR flush_all is refused by this proxy (set flush_all: broadcast)\r\n"},
		{"bogus\r\n", "ERROR\r\n"},
		{"get " + strings.Repeat("k", 251) + "\r\n", "CLIENT_ERROR bad command line format\r\n"},
	}
	for _, st := range steps {
		if got := c.do(st.req); got != st.want {
			t.Errorf("%q: got %q, want %q", st.req, got, st.want)
		}
	}
	// cas with the unique value gets returned.
	got := c.do("gets a\r\n")
	var cas uint64
	if _, err := fmt.Sscanf(got, "VALUE a 0 4 %d", &cas); err != nil {
		t.Fatalf("gets: %q", got)
	}
	if got := c.do(fmt.Sprintf("cas a 0 0 1 %d\r\nq\r\n", cas)); got != "STORED\r\n" {
		t.Errorf("cas: %q", got)
	}
	if got := c.do(fmt.Sprintf("cas a 0 0 1 %d\r\nq\r\n", cas)); got != "EXISTS\r\n" {
		t.Errorf("second cas: %q", got)
	}
	// quit answers what came before it, then closes.
	c.send("get a\r\nquit\r\nget a\r\n")
	if got := c.reply(memcache.CmdGet); got != "VALUE a 0 1\r\nq\r\nEND\r\n" {
		t.Errorf("get before quit: %q", got)
	}
	if b, err := c.r.ReadByte(); err == nil {
		t.Errorf("connection open after quit (read %q)", b)
	}
}

// TestMultiGetMerged stores keys spread over three servers and reads them in
// one get, with misses and a repeated key: the reply lists the hits in the
// order of the request.
func TestMultiGetMerged(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	// md5 spreads these similar keys better than the default fnv1a_64.
	s := startProxy(t, poolYAML("  hash: md5\n", ms...))
	c := dial(t, s.Addr("p").String())
	var keys []string
	var want strings.Builder
	for i := range 60 {
		k := fmt.Sprintf("key:%d", i)
		keys = append(keys, k)
		if i%3 == 2 {
			keys = append(keys, "miss:"+k)
			continue
		}
		if got := c.do(fmt.Sprintf("set %s %d 0 %d\r\n%s\r\n", k, i, len(k), k)); got != "STORED\r\n" {
			t.Fatal(got)
		}
	}
	keys = append(keys, "key:0")
	for _, k := range keys {
		if strings.HasPrefix(k, "miss:") {
			continue
		}
		var i int
		fmt.Sscanf(k, "key:%d", &i)
		if i%3 != 2 {
			want.WriteString(string(memcache.AppendValue(nil, []byte(k), uint32(i), []byte(k), 0, false)))
		}
	}
	want.WriteString("END\r\n")
	if got := c.do("get " + strings.Join(keys, " ") + "\r\n"); got != want.String() {
		t.Fatalf("merged get:\n got %q\nwant %q", got, want.String())
	}
	// The keys really are spread: every server holds some.
	for _, m := range ms {
		d := dial(t, m.addr)
		if got := d.do("get " + strings.Join(keys, " ") + "\r\n"); !strings.HasPrefix(got, "VALUE") {
			t.Errorf("server %s holds none of the keys", m.addr)
		}
	}
}

// TestPipelining sends many requests before reading any reply, with
// noreply requests between them, and checks that replies come in order.
func TestPipelining(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	s := startProxy(t, poolYAML("", ms...))
	c := dial(t, s.Addr("p").String())
	var req, want strings.Builder
	for i := range 300 {
		fmt.Fprintf(&req, "set k%d 0 0 %d noreply\r\n%d\r\n", i, len(fmt.Sprint(i)), i)
		fmt.Fprintf(&req, "get k%d k%d\r\n", i, i+1)
		fmt.Fprintf(&want, "VALUE k%d 0 %d\r\n%d\r\nEND\r\n", i, len(fmt.Sprint(i)), i)
		fmt.Fprintf(&req, "mn\r\n")
		want.WriteString("MN\r\n")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.send(req.String())
	}()
	var got strings.Builder
	for range 300 {
		got.WriteString(c.reply(memcache.CmdGet))
		got.WriteString(c.reply(memcache.CmdMetaNoop))
	}
	<-done
	if got.String() != want.String() {
		t.Fatalf("pipelined replies differ:\n got %.300q\nwant %.300q", got.String(), want.String())
	}
}

// TestKolcoDistribution serves a pool placed by kolco's own ring (not
// twemproxy's): every key is stored on exactly one server and every server
// gets keys.
func TestKolcoDistribution(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	s := startProxy(t, poolYAML("  distribution: ring\n  key_hash: xxh3\n  vnodes: 64\n", ms...))
	c := dial(t, s.Addr("p").String())
	var keys []string
	for i := range 300 {
		k := fmt.Sprint("ring:", i)
		keys = append(keys, k)
		if got := c.do("set " + k + " 0 0 1\r\nx\r\n"); got != "STORED\r\n" {
			t.Fatal(got)
		}
	}
	spread := map[int]int{}
	for i, at := range holders(t, ms, keys) {
		if at < 0 {
			t.Fatalf("key %q on %d servers", keys[i], -at)
		}
		spread[at]++
	}
	if len(spread) != 3 {
		t.Fatalf("keys per server %v", spread)
	}
}

// TestStatsAndFlushBroadcast checks that stats answers with the proxy's own
// figures and that flush_all, when the pool allows it, reaches every server.
func TestStatsAndFlushBroadcast(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	s := startProxy(t, poolYAML("  hash: md5\n  flush_all: broadcast\n", ms...))
	c := dial(t, s.Addr("p").String())
	var keys []string
	for i := range 20 {
		keys = append(keys, fmt.Sprint("fl:", i))
		c.do("set " + keys[i] + " 0 0 1\r\nx\r\n")
	}
	c.do("bogus\r\n")
	st := c.do("stats\r\n")
	for _, want := range []string{"STAT cmd_set 20\r\n", "STAT client_errors 1\r\n", "STAT curr_connections 1\r\n",
		"STAT servers 2\r\n", "STAT servers_live 2\r\n", "STAT server:" + ms[0].addr + ":requests "} {
		if !strings.Contains(st, want) {
			t.Errorf("stats lacks %q:\n%s", want, st)
		}
	}
	if got := c.do("stats proxy\r\n"); !strings.Contains(got, "STAT servers 2\r\n") {
		t.Errorf("stats proxy: %q", got)
	}
	for _, arg := range []string{"items", "slabs", "settings", "bogus"} {
		if got := c.do("stats " + arg + "\r\n"); got != "SERVER_ERROR the proxy answers stats (its own figures) only; ask the servers for stats "+arg+"\r\n" {
			t.Errorf("stats %s: %q", arg, got)
		}
	}
	if got := c.do("flush_all\r\n"); got != "OK\r\n" {
		t.Fatalf("flush_all: %q", got)
	}
	for i, at := range holders(t, ms, keys) {
		if at != -1 {
			t.Fatalf("key %s survived flush_all on server %d", keys[i], at)
		}
	}
}

// TestVersionNeedsALiveServer: "version" is answered by a server, as
// nutcracker forwards it, so that a client's liveness check fails when no
// server answers; a live server answers while another is down.
func TestVersionNeedsALiveServer(t *testing.T) {
	t.Parallel()
	dead := refusedAddr(t)
	for _, tc := range []struct {
		name, extra string
		live        bool
		want        string
	}{
		{"none, every server dead", "", false, "SERVER_ERROR Connection refused\r\n"},
		{"fail-fast, every server down", "  ejection: fail-fast\n  server_failure_limit: 1\n", false, "SERVER_ERROR "},
		{"fail-fast, one server down", "  ejection: fail-fast\n  server_failure_limit: 1\n", true, "VERSION "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			servers := "   - " + dead + ":1\n"
			if tc.live {
				servers += "   - " + startMemcached(t, 0).addr + ":1\n"
			}
			s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n  timeout: 10000\n"+tc.extra+"  servers:\n"+servers)
			c := dial(t, s.Addr("p").String())
			if tc.extra != "" {
				b := s.testPool("p").backends[0]
				i := 0
				eventually(t, "the dead server marked down", func() bool {
					i++
					c.do(fmt.Sprintf("get k%d\r\n", i)) // some key of the dead server fails
					return b.health.isDown()
				})
			}
			if got := c.do("version\r\n"); !strings.HasPrefix(got, tc.want) {
				t.Errorf("version: %q, want %q...", got, tc.want)
			}
		})
	}
}
