package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/resp"
	"github.com/kolco-dev/kolco/ring"
	"github.com/kolco-dev/kolco/sim/workload"
)

// tracePlan is what the trace tests read of kolco plan --json.
type tracePlan struct {
	MoveSeconds float64 `json:"move_seconds"`
	Keys        int     `json:"keys"`
	Moved       int     `json:"moved_keys"`
	Bytes       float64 `json:"moved_bytes"`
	Traffic     struct {
		Seconds      float64 `json:"trace_seconds"`
		Requests     int64   `json:"requests"`
		Reads        int64   `json:"reads"`
		RPS          float64 `json:"rps"`
		MovedRPS     float64 `json:"moved_rps"`
		MovedReadRPS float64 `json:"moved_read_rps"`
		Nodes        []struct {
			Node      string  `json:"node"`
			RPSBefore float64 `json:"rps_before"`
			RPSAfter  float64 `json:"rps_after"`
			Hot       []struct {
				Key string  `json:"key"`
				RPS float64 `json:"rps"`
			} `json:"hot_keys"`
		} `json:"nodes"`
	} `json:"traffic"`
}

// elevenNodes returns node-0 ... node-10.
func elevenNodes() []kolco.Node {
	var out []kolco.Node
	for i := range 11 {
		out = append(out, kolco.Node{ID: fmt.Sprintf("node-%d", i)})
	}
	return out
}

// traced is what a test sent, key by key, for checking a plan of it.
type traced struct {
	requests map[string]int // requests naming each key
	reads    map[string]int
}

func newTraced() *traced { return &traced{requests: map[string]int{}, reads: map[string]int{}} }

func (tr *traced) add(key string, read bool) {
	tr.requests[key]++
	if read {
		tr.reads[key]++
	}
}

// check compares a plan of a 10 -> 11 ring change from the trace with
// what was sent, placed by the library: the keys and their requests, the
// keys that move (listed in movesFile), the requests and reads to them,
// each node's load and hottest key after the change.
func (tr *traced) check(t *testing.T, p tracePlan, movesFile string) {
	t.Helper()
	nodes := elevenNodes()
	before, err := ring.New(nodes[:10], ring.Config{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := ring.New(nodes, ring.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var total, movedReq, movedRead int
	var wantMoves []string
	load, loadBefore, hottest := map[string]int{}, map[string]int{}, map[string]string{}
	for k, n := range tr.requests {
		b, _ := before.Locate(k)
		a, _ := after.Locate(k)
		total += n
		load[a.ID] += n
		loadBefore[b.ID] += n
		if h, ok := hottest[a.ID]; !ok || n > tr.requests[h] {
			hottest[a.ID] = k
		}
		if a.ID != b.ID {
			movedReq, movedRead = movedReq+n, movedRead+tr.reads[k]
			wantMoves = append(wantMoves, moveField(k)+"\t"+b.ID+"\t"+a.ID)
		}
	}
	slices.Sort(wantMoves)
	if p.Keys != len(tr.requests) || p.Traffic.Requests != int64(total) || p.Moved != len(wantMoves) {
		t.Errorf("plan: %d keys, %d requests, %d moved; sent %d keys, %d requests, %d move", p.Keys, p.Traffic.Requests, p.Moved, len(tr.requests), total, len(wantMoves))
	}
	if got := readMoves(t, movesFile); !slices.Equal(got, wantMoves) {
		t.Errorf("moved keys differ: plan %d, library %d", len(got), len(wantMoves))
	}
	rps := p.Traffic.RPS
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*max(1, math.Abs(want)) }
	if !near(p.Traffic.MovedRPS/rps, float64(movedReq)/float64(total)) || !near(p.Traffic.MovedReadRPS/rps, float64(movedRead)/float64(total)) {
		t.Errorf("moved requests %.4f and reads %.4f of the rate, sent %d and %d of %d", p.Traffic.MovedRPS/rps, p.Traffic.MovedReadRPS/rps, movedReq, movedRead, total)
	}
	for _, n := range p.Traffic.Nodes {
		if !near(n.RPSAfter/rps, float64(load[n.Node])/float64(total)) || !near(n.RPSBefore/rps, float64(loadBefore[n.Node])/float64(total)) ||
			len(n.Hot) == 0 && load[n.Node] > 0 ||
			len(n.Hot) > 0 && tr.requests[n.Hot[0].Key] != tr.requests[hottest[n.Node]] {
			t.Errorf("node %s: %.2f req/s before, %.2f after of %.2f, hottest %+v; sent %d before, %d after of %d, hottest %q",
				n.Node, n.RPSBefore, n.RPSAfter, rps, n.Hot, loadBefore[n.Node], load[n.Node], total, hottest[n.Node])
		}
	}
}

// planTrace runs kolco plan for a 10 -> 11 ring change from the trace and
// returns its JSON and the file of its moved keys.
func planTrace(t *testing.T, file string, flags ...string) (tracePlan, string) {
	t.Helper()
	moves := filepath.Join(t.TempDir(), "moves.tsv")
	args := append([]string{"plan", "--json", "--nodes", tenNodes, "--add", "node-10", "--trace", file, "--moves", moves}, flags...)
	code, out, errs := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("%q: exit %d: %s", args, code, errs)
	}
	var p tracePlan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	return p, moves
}

// TestPlanFromRedisMonitor captures a real redis-server's traffic with
// redis-cli MONITOR - Zipf GETs and SETs over 2 000 keys, MGETs and DELs,
// keys with spaces, quotes, tabs and bytes that are not UTF-8, commands
// naming no key - and plans a 10 -> 11 change from the capture: every key
// and request the test sent, exactly the keys the library moves, and the
// requests, reads and loads the test counted.
func TestPlanFromRedisMonitor(t *testing.T) {
	addr := startRedisServer(t)
	file := filepath.Join(t.TempDir(), "monitor.txt")
	stopMonitor := startMonitor(t, addr, file)
	c, err := resp.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Minute))
	sent := newTraced()
	odd := []string{"a b", `q"uote`, "tab\there", "\xff\x00bin", "ключ"}
	ranks := workload.Stream(workload.ZipfWeights(2000, 1.1), 20_000, 41)
	var cmds [][]string
	for i, r := range ranks {
		k := "user:" + strconv.Itoa(int(r))
		if r < int32(len(odd)) {
			k = odd[r]
		}
		switch {
		case i%10 == 9:
			cmds = append(cmds, []string{"SET", k, strings.Repeat("v", int(r)%50)})
			sent.add(k, false)
		case i%100 == 7:
			k2 := "user:" + strconv.Itoa(int(ranks[i-1]))
			cmds = append(cmds, []string{"MGET", k, k2}, []string{"PING"})
			sent.add(k, true)
			sent.add(k2, true)
		case i%500 == 3:
			cmds = append(cmds, []string{"DEL", k})
			sent.add(k, false)
		default:
			cmds = append(cmds, []string{"GET", k})
			sent.add(k, true)
		}
	}
	for lo := 0; lo < len(cmds); lo += 200 { // pipelined, 200 at a time
		batch := cmds[lo:min(lo+200, len(cmds))]
		for _, cmd := range batch {
			if err := c.Send(cmd...); err != nil {
				t.Fatal(err)
			}
		}
		for range batch {
			if _, err := c.Receive(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := c.Do("GET", "end-of-test"); err != nil {
		t.Fatal(err)
	}
	sent.add("end-of-test", true)
	stopMonitor("end-of-test")
	p, moves := planTrace(t, file)
	sent.check(t, p, moves)
	if p.Traffic.Reads != int64(sum(sent.reads)) {
		t.Errorf("%d reads planned, %d sent", p.Traffic.Reads, sum(sent.reads))
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// startMonitor runs redis-cli MONITOR against addr, its output to file,
// and returns a function that waits until the capture holds a command
// naming marker and stops it.
func startMonitor(t *testing.T, addr, file string) func(marker string) {
	t.Helper()
	bin := realprog.Binary(t, "redis-tools", "redis-cli")
	host, port, _ := strings.Cut(addr, ":")
	out, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-h", host, "-p", port, "monitor")
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); out.Close(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	waitFile := func(want string) {
		deadline := time.Now().Add(time.Minute)
		for {
			b, _ := os.ReadFile(file)
			if bytes.Contains(b, []byte(want)) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("redis-cli monitor: no %q in its output after a minute:\n%.500s", want, b)
			}
			time.Sleep(10 * time.Millisecond) // polling a file for a condition, not ordering
		}
	}
	waitFile("OK\n")
	return func(marker string) {
		waitFile(strconv.Quote(marker))
		cmd.Process.Kill()
		<-exited
	}
}

// TestPlanFromTwitterTrace plans a 10 -> 11 change from a cache trace in
// the Twitter format the test writes: Zipf gets and sets over 3 000 keys
// across 600 seconds, a header, a key holding a comma. Every key and
// request counts, the request rate is the requests over the span, the
// moves, loads and hot keys are the library's, and a store's move at 100
// keys a second takes the time of the node that sends the most.
func TestPlanFromTwitterTrace(t *testing.T) {
	ranks := workload.Stream(workload.ZipfWeights(3000, 0.9), 30_000, 43)
	var b strings.Builder
	b.WriteString("timestamp,key,key_size,value_size,client_id,operation,ttl\n")
	sent := newTraced()
	for i, r := range ranks {
		k := fmt.Sprintf("nz:u:%d", r)
		if r == 5 {
			k = "nz:a,b"
		}
		op, ttl := "get", 0
		if i%7 == 0 {
			op, ttl = "set", 3600
		}
		fmt.Fprintf(&b, "%d,%s,%d,%d,%d,%s,%d\n", i/50, k, len(k), 100+int(r)%400, i%13, op, ttl)
		sent.add(k, op == "get")
	}
	file := filepath.Join(t.TempDir(), "cluster.csv")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	p, moves := planTrace(t, file, "--trace-format", "twitter", "--move-rate", "100")
	sent.check(t, p, moves)
	donors := map[string]int{}
	for _, m := range readMoves(t, moves) {
		donors[strings.Split(m, "\t")[1]]++
	}
	most := 0
	for _, n := range donors {
		most = max(most, n)
	}
	if p.MoveSeconds != float64(most)/100 {
		t.Errorf("a store's move at 100 keys/s: %v s, want %v (the most keys one node sends, %d)", p.MoveSeconds, float64(most)/100, most)
	}
	if span := float64((len(ranks) - 1) / 50); p.Traffic.Seconds != span || p.Traffic.RPS != float64(len(ranks))/span {
		t.Errorf("span %v s, %v req/s; want %v s, %v", p.Traffic.Seconds, p.Traffic.RPS, span, float64(len(ranks))/span)
	}
}

// smallTrace writes a kolco trace of reads and writes of a few keys over
// ten seconds and returns its path.
func smallTrace(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("#kolco-trace v1\n")
	for i := range 400 {
		op, res := "get", "hit"
		if i%5 == 0 {
			op, res = "set", "-"
		}
		fmt.Fprintf(&b, "%d.%03d user:%d 100 %s %s\n", 1700000000+i/40, (i%40)*25, i%37*i%11, op, res)
	}
	file := filepath.Join(t.TempDir(), "small.trace")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestPlanTraceFlags: every trace flag with the others, planned (exit 0)
// or refused on one line: a usage error (2), or a trace that cannot be
// read (1, naming the line).
func TestPlanTraceFlags(t *testing.T) {
	file := smallTrace(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.trace")
	os.WriteFile(bad, []byte("#kolco-trace v1\n1 k 1 get hit\n2 k x get hit\n"), 0o644)
	oneTime := filepath.Join(dir, "one-time.trace")
	os.WriteFile(oneTime, []byte("#kolco-trace v1\n1 a 1 get hit\n1 b 1 get hit\n"), 0o644)
	for _, c := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"plain", []string{"--trace", file}, 0, ""},
		{"csv", []string{"--trace", file, "--csv"}, 0, ""},
		{"warm with a node down", []string{"--trace", file, "--warm", "--down", "b"}, 0, ""},
		{"memory and charts", []string{"--trace", file, "--memory", "20kB", "--plot", filepath.Join(dir, "l.svg"), "--plot-curve", filepath.Join(dir, "c.png")}, 0, ""},
		{"memory per node", []string{"--trace", file, "--memory", "a=20kB,b=30kB,c=10kB,d=20kB", "--eviction", "lru", "--sample-keys", "10"}, 0, ""},
		{"a store's move", []string{"--trace", file, "--redis", "--move-rate", "10", "--window", "5s", "--top", "1"}, 0, ""},
		{"a history", []string{"--trace", file, "--to", "a,b", "--to", "a,b,c,d,e"}, 0, ""},
		{"format named", []string{"--trace", file, "--trace-format", "kolco", "--data", "1GB"}, 0, ""},
		{"with keys", []string{"--trace", file, "--keys", "10"}, 2, "--keys"},
		{"with a key file", []string{"--trace", file, "--keys-file", file}, 2, "--keys-file"},
		{"with rps", []string{"--trace", file, "--rps", "10"}, 2, "--rps"},
		{"window alone", []string{"--window", "1s"}, 2, "--trace"},
		{"memory alone", []string{"--memory", "1MiB"}, 2, "--trace"},
		{"eviction without memory", []string{"--trace", file, "--eviction", "lru"}, 2, "--memory"},
		{"curve without memory", []string{"--trace", file, "--plot-curve", filepath.Join(dir, "c.svg")}, 2, "--memory"},
		{"curve of a history", []string{"--trace", file, "--memory", "1MB", "--plot-curve", filepath.Join(dir, "c.svg"), "--to", "a", "--to", "a,b"}, 2, "history"},
		{"curve to a bad file", []string{"--trace", file, "--memory", "1MB", "--plot-curve", filepath.Join(dir, "c.txt")}, 2, ".svg"},
		{"zero memory", []string{"--trace", file, "--memory", "0"}, 2, "--memory"},
		{"memory twice", []string{"--trace", file, "--memory", "1MB,2MB"}, 2, "twice"},
		{"memory of no node", []string{"--trace", file, "--memory", "1MB,x=1MB"}, 2, "x"},
		{"memory of some nodes", []string{"--trace", file, "--memory", "a=1MB"}, 2, "node b"},
		{"window past the trace", []string{"--trace", file, "--window", "1h"}, 2, "span"},
		{"negative window", []string{"--trace", file, "--window", "-1s"}, 2, "--window"},
		{"unknown format", []string{"--trace", file, "--trace-format", "csv"}, 2, "csv"},
		{"unknown eviction", []string{"--trace", file, "--memory", "1MB", "--eviction", "fifo"}, 2, "fifo"},
		{"top 0", []string{"--trace", file, "--top", "0"}, 2, "--top"},
		{"a hit rate the trace gives", []string{"--trace", file, "--hit-rate", "0.9"}, 2, "--hit-rate"},
		{"a hit rate and memory", []string{"--trace", file, "--hit-rate", "0.9", "--memory", "1MB"}, 2, "--hit-rate"},
		{"a redis database", []string{"--trace", file, "--redis", "--redis-db", "2"}, 2, "--redis-db"},
		{"no such file", []string{"--trace", filepath.Join(dir, "none")}, 1, "none"},
		{"a bad line", []string{"--trace", bad}, 1, "line 3"},
		{"no span", []string{"--trace", oneTime}, 1, "one time"},
		{"format misnamed", []string{"--trace", file, "--trace-format", "monitor"}, 1, "line 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"plan", "--nodes", "a,b,c"}, c.args...)
			if !slices.Contains(c.args, "--to") {
				args = append(args, "--add", "d")
			}
			code, _, errs := runCLI(t, "", args...)
			if code != c.code || c.code != 0 && (strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.says)) {
				t.Errorf("exit %d, stderr %q; want exit %d naming %q", code, errs, c.code, c.says)
			}
		})
	}
}

// FuzzPlanTraceFlags feeds kolco plan --trace arbitrary --memory, --window
// and --top values and trace bytes: it plans (exit 0), refuses them as a
// usage error (2) or as a trace it cannot read (1), on one line, and never
// panics.
func FuzzPlanTraceFlags(f *testing.F) {
	f.Add("64MiB", "1s", "3", "#kolco-trace v1\n1 a 1 get hit\n2 b 2 set -\n")
	f.Add("a=1MB,b=2MB", "", "1", "OK\n1.5 [0 c:1] \"get\" \"k\"\n3.5 [0 c:1] \"mget\" \"k\" \"j\"\n")
	f.Add("-1", "-5m", "0", "0,k,1,2,3,get,0\n9,k,1,2,3,set,0\n")
	f.Add("", "10h", "99", "ts=1.5 gid=1 type=item_get key=k status=found clsid=1 cfd=1 size=1\nts=2.5 gid=2 type=item_get key=j status=not_found clsid=1 cfd=1 size=0\n")
	f.Fuzz(func(t *testing.T, memory, window, top, body string) {
		file := filepath.Join(t.TempDir(), "trace")
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"plan", "--nodes", "a,b", "--add", "c", "--trace", file, "--top", top}
		if memory != "" {
			args = append(args, "--memory", memory, "--sample-keys", "50")
		}
		if window != "" {
			args = append(args, "--window", window)
		}
		code, _, errs := runCLI(t, "", args...)
		if code != 0 && (code != 1 && code != 2 || strings.Count(errs, "\n") != 1) {
			t.Fatalf("%q: exit %d, stderr %q", args, code, errs)
		}
	})
}
