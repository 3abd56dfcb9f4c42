package proxy

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// TestRedisPubSubLikeServer: a client's pub/sub session through a pool of
// three servers gets the replies one redis-server gives, in order:
// confirmations counting every subscription, PING and refusals while
// subscribed, PUBLISH's receivers, and plain commands again once
// everything is unsubscribed.
func TestRedisPubSubLikeServer(t *testing.T) {
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	one := startRedis(t, 0)
	s := startProxy(t, redisPoolYAML("", rs...))
	via, direct := dialRedis(t, s.Addr("p").String()), dialRedis(t, one.addr)
	pubVia, pubDirect := dialRedis(t, s.Addr("p").String()), dialRedis(t, one.addr)
	type step struct {
		pub  bool // sent by the publisher
		args []string
		n    int // replies to read
	}
	for _, st := range []step{
		{false, []string{"UNSUBSCRIBE"}, 1},
		{false, []string{"SUBSCRIBE", "a", "b", "c", "d"}, 4},
		{false, []string{"SUBSCRIBE", "a"}, 1},
		{false, []string{"PSUBSCRIBE", "x*", "y*"}, 2},
		{false, []string{"PING"}, 1},
		{false, []string{"PING", "hi"}, 1},
		{false, []string{"GET", "k"}, 1},
		{true, []string{"PUBLISH", "a", "m1"}, 1},
		{false, nil, 1}, // the message
		{true, []string{"PUBLISH", "xa", "m2"}, 1},
		{false, nil, 1}, // the pattern's message
		{true, []string{"PUBLISH", "nobody", "m3"}, 1},
		{false, []string{"UNSUBSCRIBE", "b", "zz"}, 2},
		{false, []string{"UNSUBSCRIBE", "a", "c", "d"}, 3},
		{false, []string{"UNSUBSCRIBE"}, 1},
		{false, []string{"PUNSUBSCRIBE", "y*", "x*"}, 2},
		{false, []string{"PUNSUBSCRIBE"}, 1},
		{false, []string{"GET", "k"}, 1},
		{false, []string{"SSUBSCRIBE", "s1"}, 1},
		{true, []string{"SPUBLISH", "s1", "m4"}, 1},
		{false, nil, 1},
		{false, []string{"SUNSUBSCRIBE"}, 1},
		{false, []string{"PING"}, 1},
	} {
		c, d := via, direct
		if st.pub {
			c, d = pubVia, pubDirect
		}
		if st.args != nil {
			c.send(st.args...)
			d.send(st.args...)
		}
		for i := range st.n {
			got, err1 := c.read()
			want, err2 := d.read()
			if err1 != nil || err2 != nil || got != want {
				t.Fatalf("%q reply %d: through kolco %q (%v), directly %q (%v)", st.args, i, got, err1, want, err2)
			}
		}
	}
}

// TestRedisPubSubGoRedis: 20 go-redis subscribers of 100 channels and one
// of a pattern over them, through a pool of three servers, each get all of
// 10,000 messages, in each channel's order; PUBLISH counts them; PUBSUB's
// answers are merged over the servers; sharded pub/sub works too.
func TestRedisPubSubGoRedis(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	s := startProxy(t, redisPoolYAML("", rs...))
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr("p").String(), PoolSize: 4})
	defer c.Close()
	const subscribers, channels, messages = 20, 100, 10000
	names := make([]string, channels)
	for i := range names {
		names[i] = fmt.Sprint("ch:", i)
	}
	var subs []*goredis.PubSub
	for range subscribers {
		ps := c.Subscribe(ctx, names...)
		subs = append(subs, ps)
	}
	subs = append(subs, c.PSubscribe(ctx, "ch:*"))
	for i, ps := range subs {
		defer ps.Close()
		confirmations := channels
		if i == subscribers {
			confirmations = 1
		}
		for range confirmations {
			if _, err := ps.Receive(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(subs))
	for _, ps := range subs {
		wg.Add(1)
		go receiveAll(t, ps, messages, &wg, errs)
	}
	for start := 0; start < messages; start += 500 {
		cmds, err := c.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for i := start; i < start+500; i++ {
				p.Publish(ctx, names[i%channels], fmt.Sprintf("%d:%d", i%channels, i/channels))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range cmds {
			if n := cmd.(*goredis.IntCmd).Val(); n != subscribers+1 {
				t.Fatalf("PUBLISH reached %d subscribers, want %d", n, subscribers+1)
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := c.PubSubNumSub(ctx, "ch:0", "ch:99", "none").Val(); got["ch:0"] != subscribers || got["ch:99"] != subscribers || got["none"] != 0 {
		t.Errorf("PUBSUB NUMSUB: %v", got)
	}
	if got := c.PubSubChannels(ctx, "ch:*").Val(); len(got) != channels {
		t.Errorf("PUBSUB CHANNELS: %d channels", len(got))
	}
	if got := c.PubSubNumPat(ctx).Val(); got != 1 {
		t.Errorf("PUBSUB NUMPAT: %d", got)
	}
	ss := c.SSubscribe(ctx, "shard:1")
	defer ss.Close()
	if _, err := ss.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if n := c.SPublish(ctx, "shard:1", "hello").Val(); n != 1 {
		t.Errorf("SPUBLISH reached %d", n)
	}
	if m, err := ss.ReceiveMessage(ctx); err != nil || m.Payload != "hello" {
		t.Errorf("the shard message: %v %v", m, err)
	}
}

// receiveAll reads n messages from ps and checks that each channel's come
// in the order they were published.
func receiveAll(t *testing.T, ps *goredis.PubSub, n int, wg *sync.WaitGroup, errs chan<- error) {
	defer wg.Done()
	next := map[string]int{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for range n {
		m, err := ps.ReceiveMessage(ctx)
		if err != nil {
			errs <- err
			return
		}
		var ch, i int
		if _, err := fmt.Sscanf(m.Payload, "%d:%d", &ch, &i); err != nil || m.Channel != fmt.Sprint("ch:", ch) || i != next[m.Channel] {
			errs <- fmt.Errorf("message %q on %s, want number %d", m.Payload, m.Channel, next[m.Channel])
			return
		}
		next[m.Channel] = i + 1
	}
}

// TestRedisPubSubThroughChanges: a go-redis subscriber whose channels'
// server changes - a server added to the pool, then one killed and
// ejected - is closed by the proxy and, resubscribing as go-redis does,
// gets the messages published where each channel now lives.
func TestRedisPubSubThroughChanges(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	extra := "  auto_eject_hosts: true\n  server_failure_limit: 1\n  server_retry_timeout: 600000\n"
	s := startProxy(t, redisPoolYAML(extra, rs[:2]...))
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr("p").String(), PoolSize: 2})
	defer c.Close()
	names := make([]string, 20)
	for i := range names {
		names[i] = fmt.Sprint("news:", i)
	}
	ps := c.Subscribe(ctx, names...)
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := ps.Channel()
	// heard publishes to every channel until each has been heard from
	// since, and counts the channels that do not reach the subscriber.
	heard := func(what string) {
		t.Helper()
		got := map[string]bool{}
		eventually(t, "the subscriber hears every channel "+what, func() bool {
			for _, n := range names {
				if !got[n] {
					_ = c.Publish(ctx, n, what).Err() // may fail while a server is ejected
				}
			}
			for {
				select {
				case m := <-msgs:
					if m.Payload == what {
						got[m.Channel] = true
					}
					continue
				case <-time.After(50 * time.Millisecond):
				}
				return len(got) == len(names)
			}
		})
	}
	heard("before")
	before := map[string]string{}
	for _, n := range names {
		before[n] = ownerOf(s.testPool("p"), n)
	}
	reload(t, s, redisPoolYAML(extra, rs...))
	movedTo := 0
	for _, n := range names {
		if ownerOf(s.testPool("p"), n) != before[n] {
			movedTo++
		}
	}
	if movedTo == 0 {
		t.Fatal("no channel moved to the new server: the test tests nothing")
	}
	heard("after the new server")
	victim := ownerOf(s.testPool("p"), names[0])
	for _, r := range rs {
		if r.addr == victim {
			r.stop()
		}
	}
	heard("after a server died")
}
