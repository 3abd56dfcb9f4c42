package proxy

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/resp"
	"github.com/kolco-dev/kolco/membership/sentinel/sentineltest"
)

// getCalls returns how many GETs the server at addr has run.
func getCalls(t *testing.T, addr string) int {
	info, err := sentineltest.Do(addr, "INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	s := infoField(info.Str, "cmdstat_get")
	calls, _, _ := strings.Cut(strings.TrimPrefix(s, "calls="), ",")
	n, _ := strconv.Atoi(calls)
	return n
}

func trackerOf(p *pool) *replicaTracker {
	st, _ := p.frontState.Load().(*redisPoolState)
	if st == nil {
		return nil
	}
	return st.replicas.Load()
}

// TestReplicaReads: with replica_reads on, a client that has written
// nothing reads from the shard's replica; one that wrote reads its own
// writes (SET then GET, pipelined, 200 times: none stale), where the same
// pipeline read from the replica by a client that did not write finds
// stale values; a replica frozen (SIGSTOP) is not read once its lag
// passes the bound, and reads go to the primary, fresh, until it is back.
func TestReplicaReads(t *testing.T) {
	t.Parallel()
	c := sentineltest.Start(t, 2000*time.Millisecond, "shard-a")
	sh := c.Shards[0]
	yaml := sentinelPoolYAML(c, "127.0.0.1:0") + "  replica_reads: {enabled: true, max_lag: 300}\n"
	s := startProxy(t, yaml)
	addr := s.Addr("p").String()
	eventually(t, "the replica readable", func() bool {
		tr := trackerOf(s.testPool("p"))
		if tr == nil {
			return false
		}
		reps := tr.shards["shard-a"].replicas.Load()
		return reps != nil && len(*reps) == 1 && (*reps)[0].readable.Load()
	})
	writer, reader := dialRedis(t, addr), dialRedis(t, addr)
	if got := writer.do("SET", "k", "v0"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	time.Sleep(50 * time.Millisecond)
	before := getCalls(t, sh.Replica.Addr)
	for range 50 {
		if got := reader.do("GET", "k"); got != "$2\r\nv0\r\n" {
			t.Fatalf("a reader reads %q", got)
		}
	}
	if n := getCalls(t, sh.Replica.Addr) - before; n != 50 {
		t.Errorf("%d of 50 GETs of a client that wrote nothing reached the replica", n)
	}

	stale, otherStale := readYourWrites(writer, reader)
	t.Logf("SET then GET pipelined: %d of 200 stale on the writer's connection; %d of 200 read stale by another client at once (from the replica)", stale, otherStale)
	if stale != 0 {
		t.Errorf("a client read %d of its own writes stale", stale)
	}

	// A frozen replica.
	if err := sh.Replica.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	defer sh.Replica.Signal(syscall.SIGCONT)
	eventually(t, "the frozen replica unreadable", func() bool {
		return !(*trackerOf(s.testPool("p")).shards["shard-a"].replicas.Load())[0].readable.Load()
	})
	st := poolEntry{p: s.testPool("p")}.status()
	if reps := st.Servers[0].Replicas; len(reps) != 1 || reps[0].Addr != sh.Replica.Addr || reps[0].Readable || reps[0].LagMs != -1 {
		t.Errorf("/v1/pools shows the frozen replica as %+v", reps)
	}
	var page bytes.Buffer
	if err := pageTemplate.Execute(&page, pageData{Pools: []pagePool{pageOf(st, nil)}}); err != nil || !strings.Contains(page.String(), "Replica of shard-a: "+sh.Replica.Addr+", not answering") {
		t.Errorf("the status page: %v; lacks the frozen replica", err)
	}
	t.Logf("frozen replica unreadable after %v (max_lag 300 ms, measured every %v)", time.Since(stopped).Round(time.Millisecond), lagTick)
	if got := writer.do("SET", "k", "fresh"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	fresh := dialRedis(t, addr)
	start := time.Now()
	if got := fresh.do("GET", "k"); got != "$5\r\nfresh\r\n" {
		t.Errorf("with the replica frozen a new client reads %q", got)
	}
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("the read took %v: it waited for the frozen replica", d)
	}
	sh.Replica.Signal(syscall.SIGCONT)
	eventually(t, "the replica readable again", func() bool {
		return (*trackerOf(s.testPool("p")).shards["shard-a"].replicas.Load())[0].readable.Load()
	})
}

// TestReplicaLag: a replica's lag is the time since the latest offset of
// its primary it has reached; one that reached none kept is not known.
func TestReplicaLag(t *testing.T) {
	now := time.Unix(100, 0)
	samples := []offsetAt{{100, now.Add(-900 * time.Millisecond)}, {250, now.Add(-500 * time.Millisecond)}, {400, now.Add(-100 * time.Millisecond)}}
	for _, c := range []struct {
		offset int64
		want   time.Duration
	}{{400, 100 * time.Millisecond}, {999, 100 * time.Millisecond}, {399, 500 * time.Millisecond}, {250, 500 * time.Millisecond}, {100, 900 * time.Millisecond}, {99, -1}} {
		if got := lagOf(samples, c.offset, now); got != c.want {
			t.Errorf("offset %d: lag %v, want %v", c.offset, got, c.want)
		}
	}
	if got := lagOf(nil, 5, now); got != -1 {
		t.Errorf("no samples: %v", got)
	}
}

// TestReplicaAddrs: SENTINEL REPLICAS's replicas are read when up and
// linked to their primary, and skipped otherwise.
func TestReplicaAddrs(t *testing.T) {
	rep := func(kv ...string) resp.Value {
		v := resp.Value{Kind: '*'}
		for _, s := range kv {
			v.Elems = append(v.Elems, resp.Value{Kind: '$', Str: s})
		}
		return v
	}
	v := resp.Value{Kind: '*', Elems: []resp.Value{
		rep("ip", "10.0.0.2", "port", "6380", "flags", "slave", "master-link-status", "ok"),
		rep("ip", "10.0.0.3", "port", "6380", "flags", "s_down,slave", "master-link-status", "ok"),
		rep("ip", "10.0.0.4", "port", "6380", "flags", "slave", "master-link-status", "err"),
		rep("ip", "10.0.0.5", "port", "0", "flags", "slave", "master-link-status", "ok"),
		rep("ip", "10.0.0.1", "port", "6379", "flags", "slave", "master-link-status", "ok"),
		rep("ip"),
		{Kind: ':', Int: 1},
	}}
	if got := replicaAddrs(v); strings.Join(got, " ") != "10.0.0.1:6379 10.0.0.2:6380" {
		t.Errorf("replicas %v", got)
	}
	info := "# Replication\r\nrole:slave\r\nmaster_link_status:up\r\nslave_repl_offset:12345\r\nmaster_repl_offset:x\r\n"
	if n, ok := infoInt(info, "slave_repl_offset"); !ok || n != 12345 {
		t.Errorf("slave_repl_offset %d %v", n, ok)
	}
	if _, ok := infoInt(info, "master_repl_offset"); ok {
		t.Error("a field that is not a number read as one")
	}
	if infoField(info, "master_link_status") != "up" || infoField(info, "nope") != "" {
		t.Error("infoField")
	}
}

// readYourWrites pipelines SET and GET of one key 200 times on writer,
// and 200 times SET on writer with a GET on reader sent at once; it
// returns how many GETs read a value other than the SET's, on each.
func readYourWrites(writer, reader *rc) (stale, otherStale int) {
	for i := range 200 {
		v := "w" + strconv.Itoa(i)
		writer.send("SET", "k", v)
		writer.send("GET", "k")
		writer.read()
		if got, _ := writer.read(); got != fmt.Sprintf("$%d\r\n%s\r\n", len(v), v) {
			stale++
		}
	}
	// The same from two clients: the reader's GET goes to the replica.
	for i := range 200 {
		v := "r" + strconv.Itoa(i)
		writer.send("SET", "k", v)
		reader.send("GET", "k")
		_ = writer.w.Flush()
		_ = reader.w.Flush()
		writer.read()
		if got, _ := reader.read(); got != fmt.Sprintf("$%d\r\n%s\r\n", len(v), v) {
			otherStale++
		}
	}
	return stale, otherStale
}
