package proxy

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// helloID matches HELLO's "id" field and its value, which differ between
// any two connections.
var helloID = regexp.MustCompile(`\$2\r\nid\r\n:\d+\r\n`)

// TestRedisRESP3AsServer: a client that says HELLO 3 to the proxy gets,
// for each command, the bytes a redis-server gives a RESP3 client: HELLO's
// map (its id aside), maps, sets, doubles, nulls, a transaction's replies,
// a blocking command's timeout, merged replies, and pub/sub's pushes; and
// HELLO 2 turns it back to RESP2. The same requests go through kolco to
// three servers and to one redis-server directly.
func TestRedisRESP3AsServer(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	direct := startRedis(t, 0)
	s := startProxy(t, redisPoolYAML("  hash_tag: \"{}\"\n", rs...))
	k, d := dialRedis(t, s.Addr("p").String()), dialRedis(t, direct.addr)
	steps := [][]string{
		{"HELLO", "3"},
		{"SET", "s", "1"},
		{"GET", "nope"},
		{"HSET", "h", "f", "v", "g", "w"},
		{"HGETALL", "h"},
		{"SADD", "set", "3", "1"}, // an intset: its order is the server's in any process
		{"SMEMBERS", "set"},
		{"ZADD", "z", "1.5", "m", "2", "n"},
		{"ZSCORE", "z", "m"},
		{"ZRANGE", "z", "0", "-1", "WITHSCORES"},
		{"ZINCRBY", "z", "0.25", "m"},
		{"MSET", "a", "1", "b", "2", "c", "3"},
		{"MGET", "a", "nope", "b", "c", "nope2"},
		{"DEL", "a", "b", "nope"},
		{"EXISTS", "c", "s", "nope"},
		{"MULTI"},
		{"SET", "{t}x", "1"},
		{"INCRBYFLOAT", "{t}x", "0.5"},
		{"HGETALL", "{t}h"},
		{"EXEC"},
		{"BLPOP", "empty", "0.01"},
		{"CLIENT", "GETNAME"},
		{"CLIENT", "SETNAME", "me"},
		{"CLIENT", "GETNAME"},
		{"HELLO"},
		{"EVAL", "return {1, 'two', {3}}", "1", "k"},
		{"XADD", "x", "1-1", "f", "v"},
		{"XRANGE", "x", "-", "+"},
		{"PUBSUB", "NUMSUB", "ch"},
		{"PUBSUB", "NUMPAT"},
		{"PING"},
		{"CONFIG", "GET", "maxmemory-policy"}, // refused by the proxy: skipped below
		{"HELLO", "2"},
		{"HGETALL", "h"},
		{"ZSCORE", "z", "m"},
		{"GET", "nope"},
		{"HELLO", "3"},
		{"SUBSCRIBE", "ch", "other"},
		{"PING"},
		{"UNSUBSCRIBE"},
	}
	for _, step := range steps {
		got, want := k.do(step...), d.do(step...)
		if step[0] == "CONFIG" {
			continue
		}
		if step[0] == "HELLO" {
			got, want = helloID.ReplaceAllString(got, ""), helloID.ReplaceAllString(want, "")
		}
		if step[0] == "UNSUBSCRIBE" {
			// The two confirmations: redis-server's in the order of its
			// hash table, the proxy's in the names' order; each counts
			// what is left.
			got2, want2 := k.do(), d.do()
			got, want = pushNames(got+got2), pushNames(want+want2)
		}
		if got != want {
			t.Errorf("%q through kolco: %q\ndirectly: %q", step, got, want)
		}
		if step[0] == "SUBSCRIBE" {
			got, want = k.do(), d.do() // the second confirmation
			if got != want {
				t.Errorf("%q's second confirmation through kolco: %q\ndirectly: %q", step, got, want)
			}
		}
	}
}

// TestRedisRESP3PubSubPushes: a RESP3 subscriber through the proxy gets
// each message as the push a redis-server sends it, between its other
// replies, and a pattern subscription's pmessage from every server.
func TestRedisRESP3PubSubPushes(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	s := startProxy(t, redisPoolYAML("", rs...))
	addr := s.Addr("p").String()
	sub, pub := dialRedis(t, addr), dialRedis(t, addr)
	sub.do("HELLO", "3")
	if got := sub.do("SUBSCRIBE", "news"); got != ">3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n" {
		t.Fatalf("SUBSCRIBE: %q", got)
	}
	if got := sub.do("PSUBSCRIBE", "n*"); got != ">3\r\n$10\r\npsubscribe\r\n$2\r\nn*\r\n:2\r\n" {
		t.Fatalf("PSUBSCRIBE: %q", got)
	}
	if got := pub.do("PUBLISH", "news", "hi"); got != ":2\r\n" {
		t.Fatalf("PUBLISH: %q", got)
	}
	got := map[string]bool{}
	for range 2 {
		got[sub.do()] = true
	}
	for _, want := range []string{
		">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n",
		">4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$2\r\nhi\r\n",
	} {
		if !got[want] {
			t.Errorf("no %q among %v", want, got)
		}
	}
	if got := sub.do("PING"); got != "+PONG\r\n" {
		t.Errorf("PING while subscribed in RESP3: %q", got)
	}
}

// TestRedisHelloAndClient: HELLO's options and CLIENT's subcommands, as a
// client sees them on connecting: AUTH in HELLO, its refusals, SETNAME,
// CLIENT ID, SETINFO, INFO and LIST of the listener's clients.
func TestRedisHelloAndClient(t *testing.T) {
	t.Parallel()
	r0 := startRedis(t, 0)
	s := startProxy(t, redisPoolYAML("  redis_client_auth: pw\n", r0))
	addr := s.Addr("p").String()
	c := dialRedis(t, addr)
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"HELLO", "3"}, "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n"},
		{[]string{"HELLO", "3", "AUTH", "default", "bad"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{[]string{"HELLO", "x"}, "-ERR Protocol version is not an integer or out of range\r\n"},
		{[]string{"HELLO", "3", "SETNAME"}, "-ERR Syntax error in HELLO option 'SETNAME'\r\n"},
		{[]string{"GET", "k"}, "-NOAUTH Authentication required\r\n"},
	} {
		if got := c.do(step.args...); got != step.want {
			t.Errorf("%q: %q, want %q", step.args, got, step.want)
		}
	}
	got := c.do("HELLO", "3", "AUTH", "default", "pw", "SETNAME", "app")
	if !strings.HasPrefix(got, "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n") || !strings.Contains(got, "$5\r\nproto\r\n:3\r\n") {
		t.Fatalf("HELLO 3 AUTH ... SETNAME: %q", got)
	}
	id := strings.Trim(c.do("CLIENT", "ID"), ":\r\n")
	if !strings.Contains(got, "$2\r\nid\r\n:"+id+"\r\n") {
		t.Errorf("HELLO's id is not CLIENT ID's %s: %q", id, got)
	}
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"GET", "k"}, "_\r\n"},
		{[]string{"CLIENT", "GETNAME"}, "$3\r\napp\r\n"},
		{[]string{"CLIENT", "SETNAME", "has space"}, "-ERR Client names cannot contain spaces, newlines or special characters.\r\n"},
		{[]string{"CLIENT", "SETINFO", "LIB-NAME", "kolco-test"}, "+OK\r\n"},
		{[]string{"CLIENT", "SETINFO", "LIB-VER", "1.0"}, "+OK\r\n"},
		{[]string{"CLIENT", "SETINFO", "color", "red"}, "-ERR Unrecognized option 'color'\r\n"},
		{[]string{"CLIENT", "KILL", "ID", "1"}, "-ERR 'client|kill' is not supported by the proxy: connection state\r\n"},
		{[]string{"CLIENT", "TRACKING", "on"}, "-ERR 'client|tracking' is not supported by the proxy: connection state\r\n"},
	} {
		if got := c.do(step.args...); got != step.want {
			t.Errorf("%q: %q, want %q", step.args, got, step.want)
		}
	}
	info := c.do("CLIENT", "INFO")
	for _, want := range []string{"=", "txt:id=" + id + " ", " name=app ", " resp=3 ", " lib-name=kolco-test ", " lib-ver=1.0\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("CLIENT INFO %q lacks %q", info, want)
		}
	}
	other := dialRedis(t, addr)
	other.do("AUTH", "pw")
	otherID := strings.Trim(other.do("CLIENT", "ID"), ":\r\n")
	list := other.do("CLIENT", "LIST")
	if !strings.HasPrefix(list, "$") || !strings.Contains(list, "id="+id+" ") || !strings.Contains(list, "id="+otherID+" ") || strings.Count(list, " addr=") != 2 {
		t.Errorf("CLIENT LIST, in RESP2, of two clients: %q", list)
	}
	if got := other.do("CLIENT", "LIST", "ID", otherID); strings.Contains(got, "id="+id+" ") || !strings.Contains(got, "id="+otherID+" ") {
		t.Errorf("CLIENT LIST ID %s: %q", otherID, got)
	}
}

// TestGoRedisDefaultClient runs go-redis v9's Client with its defaults,
// which speak RESP3 (HELLO 3, CLIENT SETINFO), through the proxy over
// three servers: maps, doubles and nulls typed as from a server, pub/sub,
// WATCH with TxPipelined, BLPop, and the Scan iterator over every
// server.
func TestGoRedisDefaultClient(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	s := startProxy(t, redisPoolYAML("  hash_tag: \"{}\"\n", rs...))
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr("p").String(), ClientName: "dflt"})
	defer c.Close()
	info, err := c.ClientInfo(ctx).Result()
	if err != nil || info.Resp != 3 || info.Name != "dflt" || info.LibName == "" {
		t.Fatalf("CLIENT INFO: %+v, %v; want RESP3, named, with go-redis's library", info, err)
	}
	for i := range 30 {
		if err := c.Set(ctx, fmt.Sprint("d:", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.HSet(ctx, "h", "a", "1", "b", "2").Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := c.HGetAll(ctx, "h").Result(); err != nil || len(got) != 2 || got["b"] != "2" {
		t.Errorf("HGETALL: %v, %v", got, err)
	}
	if err := c.ZAdd(ctx, "z", goredis.Z{Score: 2.5, Member: "m"}).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := c.ZScore(ctx, "z", "m").Result(); err != nil || got != 2.5 {
		t.Errorf("ZSCORE: %v, %v", got, err)
	}
	if _, err := c.Get(ctx, "nope").Result(); err != goredis.Nil {
		t.Errorf("GET of no key: %v, want redis.Nil", err)
	}
	if got, err := c.MGet(ctx, "d:1", "nope", "d:2").Result(); err != nil || got[0] != "1" || got[1] != nil || got[2] != "2" {
		t.Errorf("MGET: %v, %v", got, err)
	}

	goRedisRESP3PubSub(t, c)
	goRedisRESP3Blocking(t, c)
}

// goRedisRESP3PubSub: a go-redis PubSub of c hears 10 messages in order.
func goRedisRESP3PubSub(t *testing.T, c *goredis.Client) {
	ctx := context.Background()
	ps := c.Subscribe(ctx, "news")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatalf("SUBSCRIBE: %v", err)
	}
	for i := range 10 {
		if err := c.Publish(ctx, "news", fmt.Sprint(i)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	ch := ps.Channel()
	for i := range 10 {
		select {
		case m := <-ch:
			if m.Payload != fmt.Sprint(i) {
				t.Fatalf("message %d: %q", i, m.Payload)
			}
		case <-time.After(30 * time.Second): // a guard, never the pass condition
			t.Fatalf("message %d never came", i)
		}
	}

}

// goRedisRESP3Blocking runs WATCH and a transaction, BLPOP served and
// timed out, and the Scan iterator over the keys d:0 to d:29, on c.
func goRedisRESP3Blocking(t *testing.T, c *goredis.Client) {
	ctx := context.Background()
	err := c.Watch(ctx, func(tx *goredis.Tx) error {
		n, err := tx.Get(ctx, "{acct}a").Int()
		if err != nil && err != goredis.Nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			p.Set(ctx, "{acct}a", n+10, 0)
			p.HSet(ctx, "{acct}h", "n", n)
			return nil
		})
		return err
	}, "{acct}a")
	if err != nil {
		t.Fatalf("WATCH and TxPipelined: %v", err)
	}
	if got, err := c.Get(ctx, "{acct}a").Result(); err != nil || got != "10" {
		t.Errorf("after the transaction: %q, %v", got, err)
	}

	if err := c.RPush(ctx, "q", "job").Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := c.BLPop(ctx, time.Second, "q").Result(); err != nil || len(got) != 2 || got[1] != "job" {
		t.Errorf("BLPOP: %v, %v", got, err)
	}
	if _, err := c.BLPop(ctx, 10*time.Millisecond, "q").Result(); err != goredis.Nil {
		t.Errorf("BLPOP timed out: %v, want redis.Nil", err)
	}

	seen := map[string]bool{}
	it := c.Scan(ctx, 0, "d:*", 7).Iterator()
	for it.Next(ctx) {
		seen[it.Val()] = true
	}
	if err := it.Err(); err != nil || len(seen) != 30 {
		t.Errorf("SCAN found %d of 30 keys: %v", len(seen), err)
	}
}

// pushNames returns the unsubscribe confirmations in b with their counts
// dropped, sorted: what they confirm, whatever the order.
func pushNames(b string) string {
	names := regexp.MustCompile(`unsubscribe\r\n\$\d+\r\n([^\r]*)\r\n`).FindAllStringSubmatch(b, -1)
	var out []string
	for _, n := range names {
		out = append(out, n[1])
	}
	slices.Sort(out)
	return strings.Join(out, ",") + fmt.Sprint(" counts:", strings.Count(b, ":1\r\n"), strings.Count(b, ":0\r\n"), " pushes:", strings.Count(b, ">3\r\n"))
}
