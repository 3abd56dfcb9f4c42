package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/kolco-dev/kolco/internal/storecheck"
	"github.com/kolco-dev/kolco/internal/testproc"
	"github.com/kolco-dev/kolco/proxy"
)

// locate returns the server the proxy's placement names for key.
func (p *storeProc) locate(key string) string {
	p.t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/v1/pools/rd/locate?%s", p.admin, url.Values{"key": {key}}.Encode()))
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var locs []proxy.Location
	if err := json.NewDecoder(resp.Body).Decode(&locs); err != nil || len(locs) != 1 {
		p.t.Fatalf("locate %s: %v", key, err)
	}
	return locs[0].Servers[0].Addr
}

// kill ends the proxy process with SIGKILL.
func (p *storeProc) kill() {
	p.t.Helper()
	if err := testproc.KillOwn(p.currentPid, syscall.SIGKILL); err != nil {
		p.t.Fatal(err)
	}
	<-p.exited
}

// bigHashFields is the fields of 1 KB of the crash test's big hash:
// 10 MB; KOLCO_STORE_BIG=full makes it 100 MB.
func bigHashFields() int {
	if os.Getenv("KOLCO_STORE_BIG") == "full" {
		return 100_000
	}
	return 10_000
}

// TestProxyStoreBigKeyCrash: a store pool of a kolco proxy process holds
// a big hash (10,000 fields of 1 KB) on a key whose owner changes when a
// fifth redis-server joins; eight clients run SET, GET, INCR, APPEND,
// DEL and EXPIRE on small keys and four HSET and HGET on fields of the
// hash while it goes 4 -> 5 -> 4. The process is killed with SIGKILL
// while the hash is half copied to its new server, and started again: it
// goes on with the move, copies the hash again, whole, and both histories
// are linearizable; afterwards the hash is on its server alone, with the
// fields it had and the expiry, and nothing of a copy is left anywhere.
func TestProxyStoreBigKeyCrash(t *testing.T) {
	t.Parallel()
	p := newStoreProc(t, "")
	// Where the hash goes with five servers: the placement of a process
	// that ran on five, with no keys, whose state the next one drops.
	p.write(5)
	p.start()
	var key string
	for i := 0; key == ""; i++ {
		if k := "bighash:" + strconv.Itoa(i); p.locate(k) == p.redis[4] {
			key = k
		}
	}
	p.kill()
	if err := os.Remove(p.conf + ".kolco-state"); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	p.write(4)
	p.start()
	from := p.locate(key)
	fillHash(t, from, key)
	before, err := storecheck.Digest(context.Background(), from, key)
	if err != nil {
		t.Fatal(err)
	}
	fillers := fill(t, p.addr(), 1000)
	run := storecheck.Start(storecheck.Config{Addrs: []string{p.addr()}, Seed: 35})
	hashes := storecheck.StartHash(storecheck.HashConfig{Addrs: []string{p.addr()}, Hashes: []string{key}, Seed: 35})
	time.Sleep(300 * time.Millisecond)
	p.reload(5)
	// The clients' HSET and HGET move the hash: once the copy holds its
	// lock on the new server and has written part of it, kill the proxy.
	copied := copying(t, p.redis[4], key)
	p.kill()
	t.Logf("killed with %d of %d fields copied", copied, bigHashFields())
	p.start()
	p.moved()
	p.checkPlaced(append(fillers, key), true)
	p.reload(4)
	p.moved()
	time.Sleep(300 * time.Millisecond)
	history, hashHistory := run.Stop(), hashes.Stop()
	t.Logf("small keys: %d requests answered, %d refused with -TRYAGAIN, %d of unknown outcome; first failures: %s",
		run.Answered, run.Retried, run.Unknown, strings.Join(run.Errors, "; "))
	t.Logf("the hash: %d requests answered, %d refused with -TRYAGAIN, %d of unknown outcome; first failures: %s",
		hashes.Answered, hashes.Retried, hashes.Unknown, strings.Join(hashes.Errors, "; "))
	if run.Answered < 1000 || hashes.Answered < 100 {
		t.Fatalf("only %d and %d requests answered", run.Answered, hashes.Answered)
	}
	if res, why := storecheck.Check(history, 2*time.Minute); res != porcupine.Ok {
		t.Fatalf("the small keys' history is not linearizable (%v):\n%s", res, why)
	}
	if res := storecheck.CheckHash(hashHistory, 2*time.Minute); res != porcupine.Ok {
		t.Fatalf("the hash's history is not linearizable (%v)", res)
	}
	p.checkPlaced(append(fillers, key), true)
	checkBigHash(t, p, key, before)
}

// fillHash writes the big hash on the server at addr, with a time to
// live of an hour.
func fillHash(t *testing.T, addr, key string) {
	src := dialRaw(t, addr)
	field := strings.Repeat("f", 1000)
	for i := 0; i < bigHashFields(); i += 100 {
		args := []string{"HSET", key}
		for j := i; j < i+100; j++ {
			args = append(args, strconv.Itoa(j), field)
		}
		if got := src.do(args...); !strings.HasPrefix(got, ":") {
			t.Fatalf("HSET: %q", got)
		}
	}
	src.do("PEXPIRE", key, "3600000")
}

// copying waits until the server at addr holds part of key in a copy's
// temporary key, and returns how many fields.
func copying(t *testing.T, addr, key string) int {
	dst := dialRaw(t, addr)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		line := dst.do("HLEN", "kolco:bigkey:tmp:"+key)
		if copied, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, ":"))); copied > 0 && copied < bigHashFields() {
			return copied
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no copy of the big hash under way")
	return 0
}

// checkBigHash checks that the big hash, but for the workload's fields,
// holds what it held before the moves, with the expiry it had, and that
// no server holds a copy's names.
func checkBigHash(t *testing.T, p *storeProc, key, before string) {
	owner := p.locate(key)
	c := dialRaw(t, owner)
	for i := range 16 {
		c.do("HDEL", key, "lin:"+strconv.Itoa(i)) // the workload's fields
	}
	if after, err := storecheck.Digest(context.Background(), owner, key); err != nil || after != before {
		t.Errorf("the hash on %s: %s (%v), want %s", owner, after, err, before)
	}
	for _, addr := range p.redis {
		if got := dialRaw(t, addr).do("KEYS", "kolco:bigkey:*"); got != "*0\r\n" {
			t.Errorf("a copy's names are left on %s: %q", addr, got)
		}
	}
}
