package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// storeYAML returns a Redis store pool over servers.
func storeYAML(dist string, servers []*redisServer, extra string) string {
	return redisPoolYAML("  distribution: "+dist+"\n  store: {enabled: true}\n"+extra, servers...)
}

// TestStoreMovesKeys: a store of four servers that gets a fifth, then
// loses it, moves every key whose owner changed: each key written before
// is read back through the proxy after each change, those with a TTL with
// it (what its SET gave it less the time since; some of them moved), and is
// on the server the placement names and on no other (checked on the
// servers themselves). ketama and ring.
func TestStoreMovesKeys(t *testing.T) {
	t.Parallel()
	for _, dist := range []string{"ketama", "ring"} {
		t.Run(dist, func(t *testing.T) {
			t.Parallel()
			rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
			extra := ""
			if dist == "ketama" {
				extra = "  hash: fnv1a_64\n"
			}
			s := startProxy(t, storeYAML(dist, rs[:4], extra))
			c := dialRedis(t, s.Addr("p").String())
			const n = 2000
			for i := range n {
				if got := c.do("SET", fmt.Sprintf("k:%d", i), fmt.Sprint("v", i)); got != "+OK\r\n" {
					t.Fatal(got)
				}
			}
			const nttl = 200
			// When each key's TTL began: between its SET's sending and
			// its answer.
			setSent, setAnswered := make([]time.Time, nttl), make([]time.Time, nttl)
			for i := range nttl {
				setSent[i] = time.Now()
				c.do("SET", fmt.Sprintf("ttl:%d", i), "x", "EX", fmt.Sprint(1000+i))
				setAnswered[i] = time.Now()
			}
			for _, servers := range [][]*redisServer{rs, rs[:4]} {
				before := map[string]string{}
				for i := range nttl {
					before[fmt.Sprintf("ttl:%d", i)] = ownerOf(s.testPool("p"), fmt.Sprintf("ttl:%d", i))
				}
				reload(t, s, storeYAML(dist, servers, extra))
				gets := make([][]string, n)
				for i := range gets {
					gets[i] = []string{"GET", fmt.Sprintf("k:%d", i)}
				}
				for i, got := range c.doMany(gets) {
					if !strings.HasSuffix(got, fmt.Sprint("v", i, "\r\n")) {
						t.Fatalf("after the change k:%d reads %q", i, got)
					}
				}
				moved := 0
				for i := range nttl {
					k := fmt.Sprintf("ttl:%d", i)
					var ttl int
					asked := time.Now()
					if _, err := fmt.Sscanf(c.do("PTTL", k), ":%d", &ttl); err != nil {
						t.Fatal(err)
					}
					// The TTL left is its length less the time between
					// the SET and the PTTL, each somewhere between its
					// sending and its answer (and a millisecond of
					// rounding), timed from the clients' side however
					// slow the machine is; a MIGRATE carries the TTL left
					// at its source, so the key does not age between its
					// source's reading it and its target's restoring it:
					// a few milliseconds a move, up to a second allowed.
					full := time.Duration(1000+i) * time.Second
					least, most := full-time.Since(setSent[i])-time.Millisecond, full-asked.Sub(setAnswered[i])+time.Second
					if got := time.Duration(ttl) * time.Millisecond; got < least || got > most {
						t.Errorf("PTTL of %s after the change %v, want %v to %v", k, got, least, most)
					}
					if ownerOf(s.testPool("p"), k) != before[k] {
						moved++
					}
				}
				if moved == 0 {
					t.Errorf("none of the %d keys with a TTL changed server", nttl)
				}
				p := s.testPool("p")
				eventually(t, "the mover done", func() bool { return moveOf(p.place.Load()) == nil })
				checkStoreKeys(t, p, rs, n)
			}
		})
	}
}

// checkStoreKeys checks on the servers that each key k:0..n-1 is on the
// server the pool's placement names and on no other of all.
func checkStoreKeys(t *testing.T, p *pool, all []*redisServer, n int) {
	t.Helper()
	direct := map[string]*rc{}
	for _, r := range all {
		direct[r.addr] = dialRedis(t, r.addr)
	}
	wrong := 0
	for i := range n {
		k := fmt.Sprintf("k:%d", i)
		owner := ownerOf(p, k)
		for addr, c := range direct {
			has := c.do("EXISTS", k) == ":1\r\n"
			if has != (addr == owner) && wrong < 5 {
				t.Errorf("%s on %s: %v; its server is %s", k, addr, has, owner)
			}
			if has != (addr == owner) {
				wrong++
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d keys misplaced", wrong)
	}
}

// TestStoreMoveSeenAndSteered: while a store moves its keys, /v1/pools
// shows the move with its progress, per old server, the status page and
// the metrics say so; an operator's pause stops the mover (the keys moved
// stay as they are) and resume lets it finish.
func TestStoreMoveSeenAndSteered(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	yaml := func(servers []*redisServer) string {
		return "kolco:\n  admin_listen: 127.0.0.1:0\n" + storeYAML("ring", servers, "  store: {enabled: true, rate: 100}\n")
	}
	s := startProxy(t, strings.Replace(yaml(rs[:4]), "  store: {enabled: true}\n", "", 1))
	fillStore(t, s.Addr("p").String(), 6000)
	reload(t, s, strings.Replace(yaml(rs), "  store: {enabled: true}\n", "", 1))
	var ps PoolStatus
	eventually(t, "the mover moving", func() bool {
		adminGet(t, s, "/v1/pools/p", "", &ps)
		return ps.Move != nil && ps.Move.State == "moving" && ps.Move.Moved > 0
	})
	if len(ps.Move.From) != 1 || len(ps.Move.From[0]) != 4 || len(ps.Move.Servers) != 4 || ps.Move.ToMove < 600 || ps.Move.ToMove > 2100 ||
		ps.Move.Window <= 0 || ps.Move.LatencyBoundMs < 1 || ps.Move.Servers[0].Held == 0 {
		t.Errorf("the move as /v1/pools shows it: %+v", ps.Move)
	}
	if ps.LastMove != nil {
		t.Errorf("a last move before any ended: %+v", ps.LastMove)
	}
	if page := adminBody(t, s, "/status"); !strings.Contains(page, `class="move" data-state="moving"`) {
		t.Error("the status page does not show the move")
	}
	if m := adminBody(t, s, "/metrics"); !strings.Contains(m, `kolco_proxy_store_moving{pool="p"} 1`) || !strings.Contains(m, `kolco_proxy_store_move_keys{kind="to_move",pool="p"}`) {
		t.Error("the metrics do not show the move")
	}
	if code := adminPost(t, s, "/v1/pools/p/move/pause"); code != 200 {
		t.Fatalf("pause: %d", code)
	}
	time.Sleep(300 * time.Millisecond) // a batch under way finishes
	adminGet(t, s, "/v1/pools/p", "", &ps)
	paused := ps.Move.Moved
	time.Sleep(time.Second)
	adminGet(t, s, "/v1/pools/p", "", &ps)
	if ps.Move.State != "paused" || ps.Move.Moved != paused {
		t.Errorf("paused: state %s, moved %d then %d", ps.Move.State, paused, ps.Move.Moved)
	}
	if code := adminPost(t, s, "/v1/pools/p/move/resume"); code != 200 {
		t.Fatalf("resume: %d", code)
	}
	waitMoved(t, s.testPool("p"))
	ps = PoolStatus{}
	adminGet(t, s, "/v1/pools/p", "", &ps)
	m := adminBody(t, s, "/metrics")
	if ps.Move != nil || !strings.Contains(m, `kolco_proxy_store_moving{pool="p"} 0`) || strings.Contains(m, `kolco_proxy_store_moved_keys_total{pool="p"} 0`) {
		t.Errorf("after the move: %+v", ps.Move)
	}
	// The move that ended stays in /v1/pools: when, its keys (about a
	// fifth of 6000), how long it took, the clients' p99 and its bound.
	if l := ps.LastMove; l == nil || l.Ended.IsZero() || l.Keys < 600 || l.Keys > 2100 || l.TookSeconds <= 0 || l.LatencyBoundMs < 1 {
		t.Errorf("the last move as /v1/pools shows it: %+v", ps.LastMove)
	}
	if code := adminPost(t, s, "/v1/pools/p/move/pause"); code != 409 {
		t.Errorf("pause with no move: %d, want 409", code)
	}
}

// TestStoreMoveAfterPipelinedRequests: a client pipelines a request that
// the replaced pool serves and, in the same read, one whose keys move. The
// move opens only once the replaced pool has answered its requests, so
// the earlier request is answered before the later one waits for the move
// to open: the later one is served, not answered -TRYAGAIN when the pool's
// timeout ends a wait for a move that could not open.
func TestStoreMoveAfterPipelinedRequests(t *testing.T) {
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	const timeout = 3 * time.Second
	extra := fmt.Sprintf("  timeout: %d\n", timeout.Milliseconds())
	s := startProxy(t, storeYAML("ring", rs[:1], extra))
	c := dialRedis(t, s.Addr("p").String())
	args := []string{"MSET"}
	for i := range 32 {
		args = append(args, fmt.Sprint("b", i), "x")
	}
	var pipe bytes.Buffer
	c.w = bufio.NewWriter(&pipe)
	c.send("SET", "a", "1")
	c.send(args...)
	_ = c.w.Flush()
	c.w = bufio.NewWriter(c.conn)
	whole := pipe.Bytes()
	// The first request and the second's start, in one write: the proxy
	// reads the first, sends it, and waits for the rest of the second.
	_, _ = c.w.Write(whole[:len(whole)-3])
	_ = c.w.Flush()
	direct := dialRedis(t, rs[0].addr)
	eventually(t, "the first request on its server", func() bool { return direct.do("GET", "a") == "$1\r\n1\r\n" })
	reload(t, s, storeYAML("ring", rs, extra))
	moving := 0
	for i := range 32 {
		if ownerOf(s.testPool("p"), fmt.Sprint("b", i)) == rs[1].addr {
			moving++
		}
	}
	if moving == 0 {
		t.Fatal("none of the second request's keys moves: the test tests nothing")
	}
	_, _ = c.w.Write(whole[len(whole)-3:])
	for i, want := range []string{"+OK\r\n", "+OK\r\n"} {
		if got, err := c.read(); err != nil || got != want {
			t.Fatalf("reply %d: %q %v, want %q", i+1, got, err, want)
		}
	}
	waitMoved(t, s.testPool("p"))
	if got := c.do("GET", "b0"); got != "$1\r\nx\r\n" {
		t.Errorf("after the move b0 reads %q", got)
	}
}

// TestStoreMoveWaitsForItsHours: outside store.hours the mover waits,
// and /v1/pools says so, having moved nothing and listed nothing (its
// SCAN ran ahead of the workers it held); the same move under a
// configuration that lets it run at any hour ends.
func TestStoreMoveWaitsForItsHours(t *testing.T) {
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	later, yaml := laterHours(), storeHoursYAML
	s := startProxy(t, yaml(rs[:1], later))
	fillStore(t, s.Addr("p").String(), 500)
	reload(t, s, yaml(rs, later))
	var ps PoolStatus
	eventually(t, "the mover waiting for its hours", func() bool {
		adminGet(t, s, "/v1/pools/p", "", &ps)
		return ps.Move != nil && ps.Move.State == "outside_hours"
	})
	if ps.Move.Moved != 0 || ps.Move.Scanned != 0 {
		t.Errorf("the mover moved %d keys and listed %d outside its hours", ps.Move.Moved, ps.Move.Scanned)
	}
	reload(t, s, yaml(rs, ""))
	waitMoved(t, s.testPool("p"))
}

// laterHours is a store.hours window that opens in two hours: a move
// configured with it waits.
func laterHours() string {
	from, to := time.Now().Add(2*time.Hour), time.Now().Add(3*time.Hour)
	return fmt.Sprintf("%02d:%02d-%02d:%02d", from.Hour(), from.Minute(), to.Hour(), to.Minute())
}

// storeHoursYAML is a ring store pool over servers moving in hours, with
// an admin endpoint.
func storeHoursYAML(servers []*redisServer, hours string) string {
	return "kolco:\n  admin_listen: 127.0.0.1:0\n" + redisPoolYAML("  distribution: ring\n  store: {enabled: true, hours: \""+hours+"\"}\n", servers...)
}
