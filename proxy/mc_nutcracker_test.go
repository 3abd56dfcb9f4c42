package proxy

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/internal/testproc"
	"github.com/kolco-dev/kolco/proxy/memcache"
)

// startNutcracker runs the real nutcracker with yaml (its listen address
// already set) and waits for listen; Cleanup kills it. It returns its pid.
// A port picked free may be taken by another test before nutcracker binds
// it, and nutcracker then exits: it is started again, its stats port
// picked again, up to three times, and the test fails with its log.
func startNutcracker(t *testing.T, yaml, listen string) int {
	t.Helper()
	bin := needBinary(t, "nutcracker")
	dir := t.TempDir()
	conf := filepath.Join(dir, "nc.yml")
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		logPath := filepath.Join(dir, fmt.Sprintf("nc-%d.log", attempt))
		cmd := exec.Command(bin, "-c", conf, "-s", fmt.Sprint(freePort(t)), "-a", "127.0.0.1",
			"-o", logPath, "-p", filepath.Join(dir, "nc.pid"))
		if err := testproc.Start(cmd); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-exited
		})
		if waitServing(t, listen, exited) {
			return cmd.Process.Pid
		}
		if attempt == 3 {
			log, _ := os.ReadFile(logPath)
			t.Fatalf("nutcracker exited before it listened on %s, %d times; its last log:\n%s", listen, attempt, log)
		}
	}
}

// diffKeys returns n keys of mixed shapes: short, long, with hash tags,
// with bytes >= 0x80, from a fixed seed.
func diffKeys(n int) []string {
	r := rand.New(rand.NewPCG(7, 11))
	const alpha = "abcdefghijklmnopqrstuvwxyz0123456789:_-{}"
	keys := make([]string, 0, n)
	seen := map[string]bool{}
	for len(keys) < n {
		var b []byte
		switch r.IntN(5) {
		case 0:
			b = fmt.Appendf(nil, "user:{%d}:profile", r.IntN(50))
		case 1:
			for range 1 + r.IntN(8) {
				b = append(b, 0x80+byte(r.IntN(0x7f)))
			}
		case 2:
			b = []byte(strings.Repeat("L", 200+r.IntN(50)))
			b[r.IntN(len(b))] = alpha[r.IntN(len(alpha))]
		default:
			for range 1 + r.IntN(30) {
				b = append(b, alpha[r.IntN(len(alpha))])
			}
		}
		if !seen[string(b)] {
			seen[string(b)] = true
			keys = append(keys, string(b))
		}
	}
	return keys
}

// diffStream returns a request stream over keys from a fixed seed, ending
// with a set of every key so that each is stored somewhere.
func diffStream(keys []string) []string {
	r := rand.New(rand.NewPCG(3, 5))
	var reqs []string
	k := func() string { return keys[r.IntN(len(keys))] }
	for range 1500 {
		switch r.IntN(10) {
		case 0, 1:
			v := fmt.Sprint(r.IntN(1000))
			reqs = append(reqs, fmt.Sprintf("set %s %d 0 %d\r\n%s\r\n", k(), r.IntN(100), len(v), v))
		case 2:
			reqs = append(reqs, fmt.Sprintf("get %s\r\n", k()))
		case 3:
			ks := make([]string, 1+r.IntN(20))
			for i := range ks {
				ks[i] = k()
			}
			reqs = append(reqs, "get "+strings.Join(ks, " ")+"\r\n")
		case 4:
			reqs = append(reqs, fmt.Sprintf("add %s 0 0 1\r\na\r\n", k()))
		case 5:
			cmd := []string{"append", "prepend", "replace"}[r.IntN(3)]
			reqs = append(reqs, fmt.Sprintf("%s %s 0 0 1\r\nx\r\n", cmd, k()))
		case 6:
			cmd := []string{"incr", "decr"}[r.IntN(2)]
			reqs = append(reqs, fmt.Sprintf("%s %s %d\r\n", cmd, k(), r.IntN(10)))
		case 7:
			reqs = append(reqs, fmt.Sprintf("delete %s\r\n", k()))
		case 8:
			reqs = append(reqs, fmt.Sprintf("touch %s 1000\r\n", k()))
		case 9:
			reqs = append(reqs, fmt.Sprintf("set %s 0 0 2 noreply\r\nnr\r\n", k()))
		}
	}
	for _, key := range keys {
		reqs = append(reqs, fmt.Sprintf("set %s 1 0 %d\r\n%s\r\n", key, len(key), key))
	}
	return reqs
}

// runStream sends reqs one by one to addr and returns the replies.
func runStream(t *testing.T, addr string, reqs []string) []string {
	c := dial(t, addr)
	out := make([]string, 0, len(reqs))
	for _, req := range reqs {
		if strings.Contains(req, " noreply\r\n") {
			c.send(req)
			out = append(out, "")
			continue
		}
		out = append(out, c.do(req))
	}
	return out
}

// holders returns, for each key, the index of the one backend holding it
// (-1 for none, -2 for several).
func holders(t *testing.T, ms []*memcached, keys []string) []int {
	at := make([]int, len(keys))
	for i := range at {
		at[i] = -1
	}
	for si, m := range ms {
		c := dial(t, m.addr)
		for i, k := range keys {
			if strings.HasPrefix(c.do("get "+k+"\r\n"), "VALUE") {
				if at[i] == -1 {
					at[i] = si
				} else {
					at[i] = -2
				}
			}
		}
	}
	return at
}

func flushAll(t *testing.T, ms []*memcached) {
	for _, m := range ms {
		if got := dial(t, m.addr).do("flush_all\r\n"); got != "OK\r\n" {
			t.Fatalf("flush_all on %s: %q", m.addr, got)
		}
	}
}

// TestDifferentialNutcracker sends the same command stream to nutcracker
// and to the proxy, each in front of the same memcached servers with the
// same pool settings, and requires the same replies and the same server
// for every key.
func TestDifferentialNutcracker(t *testing.T) {
	t.Parallel()
	needBinary(t, "nutcracker")
	for _, pool := range []struct {
		name, settings string
		unix           bool // two servers and both listeners on unix sockets
	}{
		{"ketama default hash", "  distribution: ketama\n  timeout: 10000\n", false},
		{"ketama md5 hash tag", "  hash: md5\n  hash_tag: \"{}\"\n  distribution: ketama\n  timeout: 10000\n", false},
		{"modula murmur", "  hash: murmur\n  distribution: modula\n  timeout: 10000\n", false},
		{"ketama unix sockets", "  distribution: ketama\n  timeout: 10000\n", true},
		{"ketama md5 unix sockets", "  hash: md5\n  distribution: ketama\n  timeout: 10000\n", true},
	} {
		t.Run(pool.name, func(t *testing.T) {
			ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
			ncListen, kListen := fmt.Sprintf("127.0.0.1:%d", freePort(t)), "127.0.0.1:0"
			if pool.unix {
				// An unnamed socket server hashes as "path:", a named one by
				// its name.
				ms[0], ms[2] = startMemcachedUnix(t), startMemcachedUnix(t)
				dir := t.TempDir()
				ncListen, kListen = filepath.Join(dir, "nc.sock"), filepath.Join(dir, "kolco.sock")+" 0600"
			}
			servers := fmt.Sprintf("  servers:\n   - %s:1\n   - %s:2\n   - %s:1 cache-c\n   - %s:3\n",
				ms[0].addr, ms[1].addr, ms[2].addr, ms[3].addr)
			startNutcracker(t, "p:\n  listen: "+ncListen+"\n"+pool.settings+servers, ncListen)
			s := startProxy(t, "p:\n  listen: "+kListen+"\n"+pool.settings+servers)

			keys := diffKeys(400)
			reqs := diffStream(keys)
			flushAll(t, ms)
			ncReplies := runStream(t, ncListen, reqs)
			ncAt := holders(t, ms, keys)
			flushAll(t, ms)
			kReplies := runStream(t, s.Addr("p").String(), reqs)
			kAt := holders(t, ms, keys)

			diffs := 0
			for i := range reqs {
				if strings.HasPrefix(reqs[i], "get ") {
					// nutcracker returns a multi-get's values server by server;
					// kolco in the order of the keys (checked here). Compare
					// them as sets.
					checkKeyOrder(t, reqs[i], kReplies[i])
					ncReplies[i], kReplies[i] = sortedValues(t, ncReplies[i]), sortedValues(t, kReplies[i])
				}
				if ncReplies[i] != kReplies[i] {
					if diffs++; diffs <= 5 {
						t.Errorf("request %d %.80q:\nnutcracker %.200q\nkolco      %.200q", i, reqs[i], ncReplies[i], kReplies[i])
					}
				}
			}
			moved, spread := 0, map[int]int{}
			for i := range keys {
				spread[kAt[i]]++
				if ncAt[i] != kAt[i] || kAt[i] < 0 {
					if moved++; moved <= 5 {
						t.Errorf("key %q: nutcracker put it on %d, kolco on %d", keys[i], ncAt[i], kAt[i])
					}
				}
			}
			if diffs+moved > 0 {
				t.Fatalf("%d replies and %d placements differ out of %d requests and %d keys", diffs, moved, len(reqs), len(keys))
			}
			if len(spread) < len(ms) {
				t.Fatalf("keys reached only %d of %d servers: %v", len(spread), len(ms), spread)
			}
			t.Logf("%d requests, %d keys: identical replies and placement; keys per server %v", len(reqs), len(keys), spread)
		})
	}
}

// sortedValues returns the VALUE entries of a get reply, sorted, then END.
func sortedValues(t *testing.T, reply string) string {
	b, spans, err := memcache.NewReplyReader(strings.NewReader(reply), 0).Read(nil, memcache.CmdGet, nil)
	if err != nil {
		t.Fatalf("reply %q: %v", reply, err)
	}
	var entries []string
	for _, sp := range spans {
		entries = append(entries, string(b[sp.Start:sp.End]))
	}
	slices.Sort(entries)
	return strings.Join(entries, "") + string(b[len(b)-len("END\r\n"):])
}

// checkKeyOrder checks that the values of a get reply come in the order of
// the request's keys.
func checkKeyOrder(t *testing.T, req, reply string) {
	keys := strings.Fields(strings.TrimSpace(req))[1:]
	b, spans, err := memcache.NewReplyReader(strings.NewReader(reply), 0).Read(nil, memcache.CmdGet, nil)
	if err != nil {
		t.Fatalf("reply %q: %v", reply, err)
	}
	next := 0
	for _, sp := range spans {
		k := string(b[sp.KeyStart:sp.KeyEnd])
		for next < len(keys) && keys[next] != k {
			next++
		}
		if next == len(keys) {
			t.Fatalf("reply to %q lists %q out of request order", req, k)
		}
		next++
	}
}
