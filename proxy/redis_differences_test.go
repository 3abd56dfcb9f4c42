package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// What nutcracker 0.5.0 does with a request kolco answers otherwise.
const (
	ncCloses      = "closes the connection"
	ncFirstServer = "sends it whole to the first key's server"
	ncReplies     = "answers"
)

// TestRedisNutcrackerDifferences holds the documented differences from
// nutcracker: requests it answers by closing the connection, or by
// sending a command of keys on several servers to the first key's server
// alone, where kolco answers (an error, or the right answer) and keeps the
// connection. Each case checks both proxies against the same servers.
func TestRedisNutcrackerDifferences(t *testing.T) {
	t.Parallel()
	needBinary(t, "nutcracker")
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	settings := fmt.Sprintf("  redis: true\n  hash_tag: \"{}\"\n  timeout: 10000\n  servers:\n   - %s:1\n   - %s:1\n", rs[0].addr, rs[1].addr)
	ncListen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startNutcracker(t, "p:\n  listen: "+ncListen+"\n"+settings, ncListen)
	s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n"+settings)
	kAddr := s.Addr("p").String()

	// Two keys on different servers, both sets holding "m".
	a, b := keysApart(t, s.testPool("p"))
	setup := dialRedis(t, kAddr)
	for _, k := range []string{a, b} {
		if got := setup.do("SADD", k, "m"); got != ":1\r\n" {
			t.Fatalf("SADD %s: %q", k, got)
		}
	}
	sum := ":2\r\n"
	for _, tc := range []struct {
		name  string
		args  []string
		nc    string // what nutcracker does
		ncGot string // its reply, with ncReplies
		kolco string // kolco's reply; "" for the package's refusal
	}{
		{"HELLO", []string{"HELLO", "4"}, ncCloses, "", "-NOPROTO unsupported protocol version\r\n"},
		{"CLIENT SETINFO", []string{"CLIENT", "SETINFO", "lib-name", "x"}, ncCloses, "", "+OK\r\n"},
		{"SELECT 0", []string{"SELECT", "0"}, ncCloses, "", "+OK\r\n"},
		{"INFO", []string{"INFO", "cluster"}, ncCloses, "", "$30\r\n# Cluster\r\ncluster_enabled:0\r\n\r\n"},
		{"EXEC without MULTI", []string{"EXEC"}, ncCloses, "", "-ERR EXEC without MULTI\r\n"},
		{"FLUSHALL", []string{"FLUSHALL"}, ncCloses, "", "-ERR 'flushall' is not supported by the proxy: commands over the whole keyspace (it empties every server: set flush_all: broadcast to allow it)\r\n"},
		{"BLPOP", []string{"BLPOP", a, "0"}, ncCloses, "", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"BLMPOP", []string{"BLMPOP", "0", "1", a, "LEFT"}, ncCloses, "", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"PUBLISH", []string{"PUBLISH", "x", "m"}, ncCloses, "", ":0\r\n"},
		{"ECHO", []string{"ECHO", "hi"}, ncCloses, "", "$2\r\nhi\r\n"},
		{"PING with a message", []string{"PING", "x"}, ncCloses, "", "$1\r\nx\r\n"},
		{"unknown command", []string{"FOO"}, ncCloses, "", "-ERR unknown command 'FOO', with args beginning with: \r\n"},
		{"wrong number of arguments", []string{"GET"}, ncCloses, "", "-ERR wrong number of arguments for 'get' command\r\n"},
		{"EVAL without keys", []string{"EVAL", "return 1", "0"}, ncCloses, "", ""},
		{"SINTER across servers", []string{"SINTER", a, b}, ncFirstServer, "", ""},
		{"EVAL across servers", []string{"EVAL", "return redis.call('scard', KEYS[2])", "2", a, b}, ncFirstServer, "", ""},
		{"EXISTS across servers", []string{"EXISTS", a, b}, ncFirstServer, "", sum},
		{"AUTH with a user name", []string{"AUTH", "default", "x"}, ncCloses, "", "+OK\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.kolco
			if want == "" {
				want = refusal(t, tc.args)
			}
			k := dialRedis(t, kAddr)
			if got := k.do(tc.args...); got != want {
				t.Errorf("kolco: %q, want %q", got, want)
			}
			if got := k.do("PING"); got != "+PONG\r\n" {
				t.Errorf("kolco after it: %q, want the connection open", got)
			}
			checkNutcracker(t, ncListen, tc.nc, tc.ncGot, tc.args, rs, s.testPool("p"))
		})
	}
}

// checkNutcracker checks that nutcracker does with args what the case
// says: closes the connection, answers as the first key's server alone
// does, or answers ncGot.
func checkNutcracker(t *testing.T, addr, what, ncGot string, args []string, rs []*redisServer, p *pool) {
	t.Helper()
	nc := dialRedis(t, addr)
	nc.send(args...)
	if what == ncCloses {
		if !nc.closed() {
			t.Errorf("nutcracker did not close the connection")
		}
		return
	}
	got := nc.do1()
	if what == ncFirstServer {
		first := args[1]
		if args[0] == "EVAL" {
			first = args[3]
		}
		owner := ownerOf(p, first)
		for _, r := range rs {
			if r.addr == owner {
				ncGot = dialRedis(t, r.addr).do(args...)
			}
		}
	}
	if got != ncGot {
		t.Errorf("nutcracker: %q, want %q (%s)", got, ncGot, what)
	}
}

// refusal returns the reply package redis makes for a request the proxy
// refuses: a command it does not serve, or one whose keys are on several
// servers (each key on a server of its own).
func refusal(t *testing.T, args []string) string {
	t.Helper()
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	var req redis.Request
	if err := redis.NewReader(bytes.NewReader(redis.AppendArgs(nil, b)), redis.Limits{}).Read(&req); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	next := 0
	var sp redis.Splitter
	var re *redis.Error
	if err := sp.Split(&req, func([]byte) int { next++; return next }); !errors.As(err, &re) {
		t.Fatalf("%q: the package does not refuse it (%v)", args, err)
	}
	return re.Reply
}

// keysApart returns two keys the pool places on different servers.
func keysApart(t *testing.T, p *pool) (string, string) {
	t.Helper()
	first := ownerOf(p, "apart:0")
	for i := 1; i < 1000; i++ {
		k := fmt.Sprint("apart:", i)
		if ownerOf(p, k) != first {
			return "apart:0", k
		}
	}
	t.Fatal("no two keys on different servers")
	return "", ""
}

// TestRedisNutcrackerQuit: nutcracker closes the connection on QUIT
// without a reply; kolco answers +OK first, as redis-server does.
func TestRedisNutcrackerQuit(t *testing.T) {
	t.Parallel()
	needBinary(t, "nutcracker")
	r := startRedis(t, 0)
	settings := fmt.Sprintf("  redis: true\n  servers:\n   - %s:1\n", r.addr)
	ncListen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startNutcracker(t, "p:\n  listen: "+ncListen+"\n"+settings, ncListen)
	s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n"+settings)
	k := dialRedis(t, s.Addr("p").String())
	if got := k.do("QUIT"); got != "+OK\r\n" || !k.closed() {
		t.Errorf("kolco: %q, and the connection closed after it: want +OK, then closed", got)
	}
	nc := dialRedis(t, ncListen)
	nc.send("QUIT")
	if !nc.closed() {
		t.Errorf("nutcracker did not close the connection at once")
	}
}

// TestRedisNutcrackerAuth holds the difference of a pool with redis_auth
// and redis_db: nutcracker sends SELECT ahead of AUTH, the server refuses
// it ("NOAUTH"), and the keys go to database 0, where kolco authenticates
// first and selects the pool's database. The replies to the clients are
// the same (see TestRedisAuthAsNutcracker).
func TestRedisNutcrackerAuth(t *testing.T) {
	t.Parallel()
	needBinary(t, "nutcracker")
	r := startRedis(t, 0, "--requirepass", "s3cret")
	settings := fmt.Sprintf("  redis: true\n  redis_auth: s3cret\n  redis_db: 2\n  servers:\n   - %s:1\n", r.addr)
	ncListen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startNutcracker(t, "p:\n  listen: "+ncListen+"\n"+settings, ncListen)
	s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n"+settings)
	for _, tc := range []struct {
		name, addr, db            string
		noAuth, wrongPass, wantDB string
	}{
		{"nutcracker", ncListen, "nc", "-NOAUTH Authentication required\r\n", "-ERR invalid password\r\n", "0"},
		{"kolco", s.Addr("p").String(), "kolco", "-NOAUTH Authentication required\r\n", "-ERR invalid password\r\n", "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRedis(t, tc.addr)
			for _, step := range []struct {
				args []string
				want string
			}{
				{[]string{"GET", "k"}, tc.noAuth},
				{[]string{"AUTH", "wrong"}, tc.wrongPass},
				{[]string{"AUTH", "s3cret"}, "+OK\r\n"},
				{[]string{"SET", tc.db, "v"}, "+OK\r\n"},
			} {
				if got := c.do(step.args...); got != step.want {
					t.Errorf("%q: %q, want %q", step.args, got, step.want)
				}
			}
			direct := dialServer(t, r, "s3cret")
			direct.do("SELECT", tc.wantDB)
			if got := direct.do("EXISTS", tc.db); got != ":1\r\n" {
				t.Errorf("the key is not in database %s", tc.wantDB)
			}
		})
	}
}

// TestRedisAuthAsNutcracker runs the real nutcracker and the proxy over the
// same redis-servers and requires the same replies, step by step, from
// pools without a password, with one the servers take, with one the
// servers reject (their -NOAUTH passed to the client, as nutcracker passes
// it), and with one the servers do not need.
func TestRedisAuthAsNutcracker(t *testing.T) {
	t.Parallel()
	needBinary(t, "nutcracker")
	open := startRedis(t, 0)
	locked := startRedis(t, 0, "--requirepass", "s3cret")
	other := startRedis(t, 0, "--requirepass", "other")
	for _, tc := range []struct {
		name, auth string
		server     *redisServer
		steps      [][]string
	}{
		{"no password", "", open, [][]string{{"AUTH", "x"}, {"SET", "k", "v"}, {"GET", "k"}}},
		{"password the servers take", "s3cret", locked, [][]string{{"GET", "k"}, {"AUTH", "wrong"}, {"GET", "k"}, {"AUTH", "s3cret"}, {"SET", "k", "v"}, {"GET", "k"}}},
		{"password the servers reject", "s3cret", other, [][]string{{"GET", "k"}, {"AUTH", "s3cret"}, {"GET", "k"}, {"SET", "k", "v"}, {"PING"}}},
		{"password the servers do not need", "s3cret", open, [][]string{{"GET", "k"}, {"AUTH", "s3cret"}, {"SET", "k", "v"}, {"GET", "k"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			settings := fmt.Sprintf("  redis: true\n  timeout: 10000\n  servers:\n   - %s:1\n", tc.server.addr)
			if tc.auth != "" {
				settings += "  redis_auth: " + tc.auth + "\n"
			}
			ncListen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			startNutcracker(t, "p:\n  listen: "+ncListen+"\n"+settings, ncListen)
			s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n"+settings)
			nc, k := dialRedis(t, ncListen), dialRedis(t, s.Addr("p").String())
			for _, step := range tc.steps {
				want := nc.do(step...)
				if got := k.do(step...); got != want {
					t.Errorf("%q: kolco %q, nutcracker %q", step, got, want)
				}
			}
		})
	}
}
