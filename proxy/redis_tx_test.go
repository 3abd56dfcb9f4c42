package proxy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// TestRedisTxGoRedis runs go-redis v9's transactions through a pool of
// three servers: optimistic increments with WATCH from eight clients at
// once lose none, TxPipelined on keys of one hash tag applies all of
// them, a watched key written by another client aborts the EXEC
// (TxFailedErr), and a transaction whose keys are on two servers is
// refused at queue time with an error naming the rule, writing nothing.
func TestRedisTxGoRedis(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	s := startProxy(t, redisPoolYAML("  hash_tag: \"{}\"\n", rs...))
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr("p").String(), PoolSize: 8})
	defer c.Close()

	const clients, each = 8, 25
	key := "{acct}:balance"
	watchIncrements(t, c, key, clients, each)
	if got, err := c.Get(ctx, key).Int(); err != nil || got != clients*each {
		t.Errorf("after %d increments with WATCH the balance is %d (%v)", clients*each, got, err)
	}
	if got, err := c.Get(ctx, "{acct}:ops").Int(); err != nil || got != clients*each {
		t.Errorf("the transactions' second key: %d (%v), want %d", got, err, clients*each)
	}

	cmds, err := c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.Set(ctx, "{u1}:a", "1", 0)
		p.RPush(ctx, "{u1}:l", "x", "y")
		p.MGet(ctx, "{u1}:a", "{u1}:nope")
		return nil
	})
	if err != nil || len(cmds) != 3 || cmds[1].(*goredis.IntCmd).Val() != 2 {
		t.Fatalf("TxPipelined on one tag: %v %v", cmds, err)
	}

	watched := goredis.NewClient(&goredis.Options{Addr: s.Addr("p").String(), PoolSize: 1})
	defer watched.Close()
	err = c.Watch(ctx, func(tx *goredis.Tx) error {
		if err := watched.Set(ctx, "{u1}:a", "by another", 0).Err(); err != nil {
			return err
		}
		_, err := tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			p.Set(ctx, "{u1}:a", "mine", 0)
			return nil
		})
		return err
	}, "{u1}:a")
	if !errors.Is(err, goredis.TxFailedErr) {
		t.Errorf("a watched key written by another client: %v, want TxFailedErr", err)
	}
	if got := c.Get(ctx, "{u1}:a").Val(); got != "by another" {
		t.Errorf("the watched key reads %q", got)
	}

	a, b := keysApart(t, s.testPool("p"))
	_, err = c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.Set(ctx, a, "1", 0)
		p.Set(ctx, b, "1", 0)
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "EXECABORT") {
		t.Errorf("a transaction over two servers: %v, want EXECABORT", err)
	}
	if n := c.Exists(ctx, a, b).Val(); n != 0 {
		t.Errorf("a refused transaction wrote %d keys", n)
	}
}

// watchIncrements increments key each times from each of clients
// goroutines, reading it and writing it back in a transaction under WATCH,
// and the key "{acct}:ops" with it; a transaction that fails for a
// watched key written meanwhile is tried again.
func watchIncrements(t *testing.T, c *goredis.Client, key string, clients, each int) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < each; {
				err := c.Watch(ctx, func(tx *goredis.Tx) error {
					n, err := tx.Get(ctx, key).Int()
					if err != nil && !errors.Is(err, goredis.Nil) {
						return err
					}
					_, err = tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
						p.Set(ctx, key, n+1, 0)
						p.Incr(ctx, "{acct}:ops")
						return nil
					})
					return err
				}, key)
				switch {
				case err == nil:
					done++
				case !errors.Is(err, goredis.TxFailedErr):
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a transaction failed: %v", err)
	}
}

// TestRedisTxRefusals: each refusal of a transaction's command is an error
// naming the rule, the transaction then fails with -EXECABORT, and the
// connection goes on.
func TestRedisTxRefusals(t *testing.T) {
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	s := startProxy(t, redisPoolYAML("  hash_tag: \"{}\"\n", rs...))
	a, b := keysApart(t, s.testPool("p"))
	tests := []struct {
		name  string
		steps [][]string // the last one's reply is checked
		want  string
	}{
		{"keys on two servers", [][]string{{"MULTI"}, {"SET", a, "1"}, {"SET", b, "1"}}, "-ERR keys of 'set' in a transaction: a transaction's keys must all be on one server"},
		{"one command over two servers", [][]string{{"MULTI"}, {"MGET", a, b}}, "-ERR keys of 'mget' in a transaction: a transaction's keys must all be on one server"},
		{"watched elsewhere", [][]string{{"WATCH", a}, {"MULTI"}, {"SET", b, "1"}}, "-ERR keys of 'set' in a transaction: a transaction's keys must all be on one server, and these map to another server than the keys it watches"},
		{"watch over two servers", [][]string{{"WATCH", a, b}}, "-ERR keys of 'watch' in a transaction: a transaction's keys must all be on one server"},
		{"watch another server", [][]string{{"WATCH", a}, {"WATCH", b}}, "-ERR keys of 'watch' in a transaction: a transaction's keys must all be on one server, and these map to another server than the keys it watches"},
		{"select inside", [][]string{{"MULTI"}, {"SELECT", "0"}}, "-ERR 'select' inside a transaction is not supported by the proxy: it changes the connection's state"},
		{"refused inside", [][]string{{"MULTI"}, {"CLUSTER", "INFO"}}, "-ERR 'cluster' is not supported by the proxy: cluster commands"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRedis(t, s.Addr("p").String())
			var got string
			for _, st := range tc.steps {
				got = c.do(st...)
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			inMulti := slices.ContainsFunc(tc.steps, func(st []string) bool { return st[0] == "MULTI" })
			if got := c.do("EXEC"); inMulti && got != "-EXECABORT Transaction discarded because of previous errors.\r\n" {
				t.Errorf("EXEC after the refusal: %q", got)
			}
			if got := c.do("PING"); got != "+PONG\r\n" {
				t.Errorf("PING after: %q", got)
			}
		})
	}
}

// TestRedisTxThroughStoreMove: a store of three servers gets a fourth and
// its mover is paused, so that the keys whose server changed are still on
// their old ones when the transactions come. Each transaction, and each
// WATCH, moves its keys first: INCR in a MULTI continues from the value
// written before the change, a WATCH then EXEC applies, and once the move
// ends every key is on its server alone with the transactions' values.
func TestRedisTxThroughStoreMove(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	yaml := func(servers []*redisServer) string {
		return "kolco:\n  admin_listen: 127.0.0.1:0\n" + storeYAML("ring", servers, "  hash_tag: \"{}\"\n")
	}
	s := startProxy(t, yaml(rs[:3]))
	c := dialRedis(t, s.Addr("p").String())
	const tags = 200
	before := map[int]string{}
	for i := range tags {
		if got := c.do("MSET", fmt.Sprintf("{t%d}:a", i), "10", fmt.Sprintf("{t%d}:b", i), "20"); got != "+OK\r\n" {
			t.Fatal(got)
		}
		before[i] = ownerOf(s.testPool("p"), fmt.Sprintf("{t%d}:a", i))
	}
	reload(t, s, yaml(rs))
	if code := adminPost(t, s, "/v1/pools/p/move/pause"); code != 200 {
		t.Fatalf("pause: %d", code)
	}
	p := s.testPool("p")
	changed := 0
	for i := range tags {
		a, b := fmt.Sprintf("{t%d}:a", i), fmt.Sprintf("{t%d}:b", i)
		if ownerOf(p, a) != before[i] {
			changed++
		}
		steps := []struct {
			args []string
			want string
		}{
			{[]string{"MULTI"}, "+OK\r\n"},
			{[]string{"INCR", a}, "+QUEUED\r\n"},
			{[]string{"INCRBY", b, "2"}, "+QUEUED\r\n"},
			{[]string{"EXEC"}, "*2\r\n:11\r\n:22\r\n"},
			{[]string{"WATCH", a}, "+OK\r\n"},
			{[]string{"GET", a}, "$2\r\n11\r\n"},
			{[]string{"MULTI"}, "+OK\r\n"},
			{[]string{"SET", a, "12"}, "+QUEUED\r\n"},
			{[]string{"EXEC"}, "*1\r\n+OK\r\n"},
		}
		for _, st := range steps {
			if got := c.do(st.args...); got != st.want {
				t.Fatalf("%q (tag %d, its server changed: %v): %q, want %q", st.args, i, ownerOf(p, a) != before[i], got, st.want)
			}
		}
	}
	if changed == 0 {
		t.Fatal("no tag changed server: the test tests nothing")
	}
	if code := adminPost(t, s, "/v1/pools/p/move/resume"); code != 200 {
		t.Fatalf("resume: %d", code)
	}
	waitMoved(t, p)
	direct := map[string]*rc{}
	for _, r := range rs {
		direct[r.addr] = dialRedis(t, r.addr)
	}
	for i := range tags {
		for k, want := range map[string]string{fmt.Sprintf("{t%d}:a", i): "$2\r\n12\r\n", fmt.Sprintf("{t%d}:b", i): "$2\r\n22\r\n"} {
			owner := ownerOf(p, k)
			for addr, d := range direct {
				got := d.do("GET", k)
				if addr == owner && got != want || addr != owner && got != "$-1\r\n" {
					t.Errorf("%s on %s (its server %s): %q", k, addr, owner, got)
				}
			}
		}
	}
	t.Logf("%d of %d tags changed server", changed, tags)
}
