package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/sim/trace"
	"github.com/kolco-dev/kolco/sim/workload"
)

// The miss-ratio curve against a real memcached. The keys "key:NNNNN" and
// their 680-byte values make items of 749 bytes, all in the 752-byte slab
// class (1394 a page): 2, 4 and 6 MiB hold 2 788, 5 576 and 8 364 of the
// 9 000 keys, so that every size evicts, and 150 000 reads of Zipf 0.4
// popularity miss from about 60% to 10% of the time (a floor of 6% being
// each key's first read).
const (
	mrcKeys      = 9000
	mrcReads     = 150_000
	mrcValueSize = 680
	mrcZipf      = 0.4
)

// TestPlanPredictsMemcachedMissRatio replays one Zipf stream of reads
// against real memcached servers of 2, 4 and 6 MiB, each read that misses
// followed by a set of the key (cache-aside, in batches of 100 pipelined
// gets), tracing what each server did in kolco's trace format. kolco plan
// reads each trace with that server's memory and predicts its miss ratio
// before a change; the prediction is within 2 points of the server's
// measured ratio, with the whole trace replayed and with a SHARDS sample
// of 2 000 of its keys (a rate near 22%). LRU's estimate is logged beside
// it: memcached's segmented LRU misses less at the small sizes.
func TestPlanPredictsMemcachedMissRatio(t *testing.T) {
	ranks := workload.Stream(workload.ZipfWeights(mrcKeys, mrcZipf), mrcReads, 37)
	dir := t.TempDir()
	for _, mib := range []int{2, 4, 6} {
		addr := startMemcached(t, "-m", fmt.Sprint(mib))
		file := filepath.Join(dir, fmt.Sprintf("m%d.trace", mib))
		measured := replayCacheAside(t, addr, ranks, file)
		mem := fmt.Sprintf("%dMiB", mib)
		whole := predictedMiss(t, file, "--memory", mem)
		sampled := predictedMiss(t, file, "--memory", mem, "--sample-keys", "2000")
		lru := predictedMiss(t, file, "--memory", mem, "--eviction", "lru")
		t.Logf("%d MiB: measured %.4f; predicted %.4f, %.4f sampled; LRU %.4f", mib, measured, whole, sampled, lru)
		if math.Abs(whole-measured) > 0.02 || math.Abs(sampled-measured) > 0.02 {
			t.Errorf("%d MiB: measured %.4f, predicted %.4f whole and %.4f sampled", mib, measured, whole, sampled)
		}
	}
}

// predictedMiss runs kolco plan on the trace of one server, "mc", about to
// be joined by another, and returns the miss ratio it predicts for mc
// before the change.
func predictedMiss(t *testing.T, file string, flags ...string) float64 {
	t.Helper()
	args := append([]string{"plan", "--json", "--nodes", "mc", "--add", "mc-2", "--trace", file}, flags...)
	code, out, errs := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("%q: exit %d: %s", args, code, errs)
	}
	var res struct {
		Traffic struct {
			Nodes []struct {
				Node       string   `json:"node"`
				MissBefore *float64 `json:"miss_ratio_before"`
			} `json:"nodes"`
		} `json:"traffic"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	for _, n := range res.Traffic.Nodes {
		if n.Node == "mc" && n.MissBefore != nil {
			return *n.MissBefore
		}
	}
	t.Fatalf("no miss ratio for mc in %s", out)
	return 0
}

// replayCacheAside reads the ranked keys from the memcached at addr, sets
// each one that misses, writes what it did to a kolco trace, and returns
// the share of the reads that missed.
func replayCacheAside(t *testing.T, addr string, ranks []int32, file string) float64 {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Minute))
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw := trace.NewWriter(f)
	r := bufio.NewReaderSize(conn, 64<<10)
	value := strings.Repeat("v", mrcValueSize)
	const batch = 100
	var out []byte
	misses, tick := 0, int64(0)
	record := func(req trace.Request) {
		tick++
		req.Time = 1_700_000_000e9 + tick*1e6 // a request a millisecond
		if err := tw.Write(req); err != nil {
			t.Fatal(err)
		}
	}
	for lo := 0; lo < len(ranks); lo += batch {
		keys := ranks[lo:min(lo+batch, len(ranks))]
		for _, k := range keys {
			out = fmt.Appendf(out, "get key:%05d\r\n", k)
		}
		if _, err := conn.Write(out); err != nil {
			t.Fatal(err)
		}
		out = out[:0]
		var missed []string
		for _, k := range keys {
			key := fmt.Sprintf("key:%05d", k)
			hit, err := readGet(r)
			if err != nil {
				t.Fatal(err)
			}
			req := trace.Request{Key: key, Size: mrcValueSize, Command: "get", Op: trace.Read, Result: trace.Hit}
			if !hit {
				req.Size, req.Result = -1, trace.Miss
				missed = append(missed, key)
			}
			record(req)
		}
		// The batch's sets go out with the next batch's gets: the server
		// sees them after this batch's gets, and so does the trace.
		for _, key := range missed {
			out = fmt.Appendf(out, "set %s 0 0 %d noreply\r\n%s\r\n", key, mrcValueSize, value)
			record(trace.Request{Key: key, Size: mrcValueSize, Command: "set", Op: trace.Write})
		}
		misses += len(missed)
	}
	if _, err := conn.Write(append(out, "mn\r\n"...)); err != nil { // the last sets, and a no-op to wait for them
		t.Fatal(err)
	}
	if line, err := r.ReadString('\n'); err != nil || line != "MN\r\n" {
		t.Fatalf("mn: %q, %v", line, err)
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	return float64(misses) / float64(len(ranks))
}

// readGet reads the reply to one get and reports whether it was a hit.
func readGet(r *bufio.Reader) (bool, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return false, err
	}
	if line == "END\r\n" {
		return false, nil
	}
	if !strings.HasPrefix(line, "VALUE ") {
		return false, fmt.Errorf("get: %q", line)
	}
	if _, err := r.Discard(mrcValueSize + 2); err != nil {
		return false, err
	}
	if line, err = r.ReadString('\n'); err != nil || line != "END\r\n" {
		return false, fmt.Errorf("get: %q after the value, %v", line, err)
	}
	return true, nil
}
