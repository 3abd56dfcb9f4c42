package proxy

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/kolco-dev/kolco/sim/trace"
)

// TestSampleRedisThroughProxy: a Redis pool with the sample on, in front
// of two real redis-servers, counts a GET's hit or miss and a SET's size,
// finds the hot key, and traces every key of an MGET and a DEL with what
// the command does to it.
func TestSampleRedisThroughProxy(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\n"+redisPoolYAML("  traffic: {enabled: true, top_keys: 4}\n", rs...))
	c := dialRedis(t, s.Addr("p").String())
	do := func(args ...string) {
		t.Helper()
		c.send(args...)
		if _, err := c.read(); err != nil {
			t.Fatal(err)
		}
	}
	do("SET", "hot", "hello")
	const rounds = 300
	for i := range rounds {
		do("GET", "hot")
		do("GET", fmt.Sprint("cold:", i))
	}
	do("MGET", "hot", "cold:1", "cold:2")
	do("DEL", "cold:3", "cold:4")
	var st PoolStatus
	if code := adminGet(t, s, "/v1/pools/p", "", &st); code != http.StatusOK || st.Traffic == nil {
		t.Fatalf("GET /v1/pools/p: %d, traffic %v", code, st.Traffic)
	}
	tr := st.Traffic
	if tr.Reads != 2*rounds+3 || tr.Misses != rounds {
		t.Errorf("%d reads, %d missed; want %d and %d (an MGET's results unknown)", tr.Reads, tr.Misses, 2*rounds+3, rounds)
	}
	if len(tr.HotKeys) == 0 || tr.HotKeys[0].Key != "hot" {
		t.Errorf("hot keys %+v, want hot first", tr.HotKeys)
	}
	resp, err := http.Get("http://" + s.AdminAddr().String() + "/v1/pools/p/trace")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd, err := trace.Open(resp.Body, trace.Auto)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := trace.Summarize(rd, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if prof.Requests != 2*rounds+6 || prof.Reads != 2*rounds+3 || prof.Writes != 1 || prof.Deletes != 2 || prof.Hits != rounds || prof.Misses != rounds {
		t.Errorf("the trace: %d requests, %d reads, %d writes, %d deletes, %d hits, %d misses",
			prof.Requests, prof.Reads, prof.Writes, prof.Deletes, prof.Hits, prof.Misses)
	}
	for _, k := range prof.Keys {
		if k.Key == "hot" && k.Size != 5 {
			t.Errorf("hot's size in the trace: %d, want 5", k.Size)
		}
	}
}

// TestTrafficChangeMovedKeysRedis: a Redis pool's change counts the keys
// it moves by SCAN of the servers before it - each key the servers hold
// whose server the change changes, as the placements before and after
// place it - and says why it measures no bytes: a Redis value need not be
// one string.
func TestTrafficChangeMovedKeysRedis(t *testing.T) {
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	yaml := func(n int) string {
		return "kolco:\n  admin_listen: \":0\"\n" + redisPoolYAML("  distribution: ring\n  traffic: {enabled: true, window: 200}\n", rs[:n]...)
	}
	s := startProxy(t, yaml(2))
	c := dialRedis(t, s.Addr("p").String())
	const keys = 500
	for i := range keys {
		if got := c.do("SET", fmt.Sprint("k:", i), "v"); got != "+OK\r\n" {
			t.Fatalf("SET: %q", got)
		}
	}
	before := s.testPool("p").place.Load().configured()
	reload(t, s, yaml(3))
	after := s.testPool("p").place.Load().configured()
	want := 0
	for i := range keys {
		k := []byte(fmt.Sprint("k:", i))
		if before.owner(k) != after.owner(k) {
			want++
		}
	}
	var ch *TrafficChange
	eventually(t, "the change's window to close", func() bool {
		var st PoolStatus
		adminGet(t, s, "/v1/pools/p", "", &st)
		if st.Traffic != nil && st.Traffic.Change != nil && st.Traffic.Change.Done {
			ch = st.Traffic.Change
		}
		return ch != nil
	})
	m := ch.Measured
	t.Logf("%d of %d keys move by the placements; measured %.0f keys, %.0f bytes (%s)", want, keys, m.MovedKeys, m.MovedBytes, m.MovedNote)
	if want == 0 || m.MovedKeys != float64(want) {
		t.Errorf("measured %.0f keys that move, want %d", m.MovedKeys, want)
	}
	if m.MovedBytes != 0 || m.MovedNote == "" {
		t.Errorf("measured %.0f bytes, note %q: want none, and the note saying why", m.MovedBytes, m.MovedNote)
	}
}
