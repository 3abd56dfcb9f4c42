package faults

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/kolco-dev/kolco/internal/resp"
	"github.com/kolco-dev/kolco/internal/storecheck"
)

// result is what a run's history showed.
type result struct {
	store bool
	// Requests by outcome.
	ops, acked, unknown, reads, hits int
	// A cache's reads that broke its promise.
	violations []Violation
	// A store's history: linearizable or not (or not decided in time),
	// and its keys whose acknowledged writes a final read did not find.
	lin    porcupine.CheckResult
	linWhy string
	drawn  string // a drawing of a key's history that is not linearizable
	lost   []string
	// errs counts the error replies and failures clients saw, by text.
	errs map[string]int
	// unsettled says why the pools had not settled after the faults.
	unsettled string
}

func (res result) failed() bool {
	return len(res.violations) > 0 || res.lin == porcupine.Illegal || len(res.lost) > 0
}

func (res result) String() string {
	var b strings.Builder
	if res.store {
		fmt.Fprintf(&b, "store history: %d requests (%d answered, %d of unknown outcome): %s; %d keys lost",
			res.ops, res.acked, res.unknown, linName(res.lin), len(res.lost))
		if res.linWhy != "" {
			b.WriteString("\n" + res.linWhy)
		}
		if res.drawn != "" {
			b.WriteString("drawn by porcupine: " + res.drawn)
		}
		if len(res.lost) > 0 {
			fmt.Fprintf(&b, "\nkeys whose acknowledged writes no final read found: %s", strings.Join(res.lost, ", "))
		}
	} else {
		fmt.Fprintf(&b, "cache history: %d requests (%d writes acknowledged, %d of unknown outcome; %d reads, %d hits): %d stale or wrong reads",
			res.ops, res.acked, res.unknown, res.reads, res.hits, len(res.violations))
		for i, v := range res.violations {
			if i == 10 {
				fmt.Fprintf(&b, "\n... and %d more", len(res.violations)-10)
				break
			}
			b.WriteString("\n  " + v.String())
		}
	}
	if res.unsettled != "" {
		b.WriteString("\nthe pools had not settled after the faults: " + res.unsettled)
	}
	if len(res.errs) > 0 {
		b.WriteString("\nclients' errors:")
		for _, k := range slices.Sorted(maps.Keys(res.errs)) {
			fmt.Fprintf(&b, "\n  %6d  %s", res.errs[k], k)
		}
	}
	return b.String()
}

func linName(r porcupine.CheckResult) string {
	switch r {
	case porcupine.Ok:
		return "linearizable"
	case porcupine.Illegal:
		return "NOT linearizable"
	}
	return "linearizability not decided in time"
}

// load runs the clients through the schedule's faults and checks their
// history.
func (r *run) load() result {
	var addrs []string
	for _, p := range r.proxies {
		addrs = append(addrs, p.listen)
	}
	// Each client sends one request every clientPace at most; the limit
	// stops one that outlives the run's time.
	limit := int((r.cfg.Length + 2*time.Minute) / clientPace)
	if r.combo.Store {
		run := storecheck.Start(storecheck.Config{Addrs: addrs, Clients: 2 * len(addrs), Keys: 48, Prefix: "f:",
			Seed: r.seed, Timeout: clientTimeout, Pace: 2 * clientPace, Limit: limit / 2})
		r.cleanup(func() { run.Stop() })
		r.faults()
		res := result{store: true, errs: map[string]int{}}
		res.unsettled = r.settle()
		history := run.Stop()
		for _, e := range run.Errors {
			res.errs[maskNumbers(e)]++
		}
		history = append(history, r.finalStoreReads(run, history, 48)...)
		res.ops, res.acked, res.unknown = len(history), run.Answered, run.Unknown
		res.lost = lostKeys(history)
		res.lin, res.linWhy, res.drawn = storeCheck(history, 3*time.Minute, func() string { return keepDir(r.seed) })
		return res
	}
	l := startCacheLoad(r.combo.Redis, r.seed, addrs, 2, 40, limit)
	r.cleanup(func() { l.stop(); l.wg.Wait() })
	r.faults()
	res := result{unsettled: r.settle()}
	history := l.finish(addrs)
	res.errs = l.errs
	lag := time.Duration(0)
	if r.combo.ReplicaReads {
		// The proxy measures a replica's lag every 100 ms, and reads it
		// while the lag is within max_lag.
		lag = maxLag + 300*time.Millisecond
	}
	res.violations = CacheModel{Lag: lag}.Check(history)
	res.ops = len(history)
	for _, op := range history {
		switch {
		case op.Kind == Get:
			res.reads++
			if op.Found {
				res.hits++
			}
		case op.Acked:
			res.acked++
		default:
			res.unknown++
		}
	}
	return res
}

// faults applies the schedule after a second of the clients alone.
func (r *run) faults() {
	time.Sleep(time.Second) // the clients' first writes, before any fault
	r.applySchedule()
}

// settle waits, up to a minute, until every proxy's pool serves all its
// servers, moves nothing and is current with its source; it returns why
// not when they do not.
func (r *run) settle() string {
	deadline := time.Now().Add(time.Minute)
	for {
		why := ""
		for _, p := range r.proxies {
			st, err := p.pool()
			if err != nil {
				why = fmt.Sprintf("%s: %v", p.Name, err)
				break
			}
			if ok, w := st.settled(); !ok {
				why = p.Name + ": " + w
				break
			}
		}
		if why == "" || time.Now().After(deadline) {
			r.event("settled: %s", or(why, "every pool serves all its servers"))
			return why
		}
		time.Sleep(100 * time.Millisecond) // polling the pools' state
	}
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// afterEvery returns a time after every request of history was sent and
// every one answered was answered: the final reads, made once the clients
// have stopped, come after all of them. A request of unknown outcome may
// take effect at any time after it was sent, so the final reads must
// follow its sending too: placed after the last answer only, they came
// before a write sent later, and a final read that found that write was
// judged not linearizable (the fault schedule's seed 1074: SET f:19 647
// sent after the last answer, read by the final GET).
func afterEvery(history []porcupine.Operation) int64 {
	var t int64
	for _, op := range history {
		t = max(t, op.Call)
		if op.Return < 1<<61 {
			t = max(t, op.Return)
		}
	}
	return t
}

// finalStoreReads reads every key of the store's workload through the
// first proxy, once the clients have stopped, retrying a read that fails
// for up to 20 s: a history ending in them shows a write lost at the end
// as well as one lost in the middle.
func (r *run) finalStoreReads(run *storecheck.Run, history []porcupine.Operation, keys int) []porcupine.Operation {
	t := afterEvery(history)
	var out []porcupine.Operation
	c, err := dialCache(true, r.proxies[0].listen)
	// A key's read is retried for up to 20 s, the reads together for up
	// to a minute: a fleet that cannot serve one key often serves none,
	// and 48 keys' 20 s each held a seed for 16 minutes (seed 4507).
	all := time.Now().Add(time.Minute)
	for k := 0; k < keys && err == nil; k++ {
		key := run.Key(k)
		deadline := time.Now().Add(20 * time.Second)
		if deadline.After(all) {
			deadline = all
		}
		for {
			var v resp.Value
			v, err = c.(*redisConn).do("GET", key)
			if err == nil {
				t += 2
				o := storecheck.Output{Nil: v.Nil, Val: v.Str}
				out = append(out, porcupine.Operation{ClientId: 1 << 20, Input: storecheck.Input{Op: "GET", Key: key}, Output: o, Call: t - 1, Return: t})
				break
			}
			if time.Now().After(deadline) {
				r.trouble(fmt.Sprintf("final read of %s: %v", key, err))
				break
			}
			if !errors.As(err, new(replyError)) {
				c.close()
				if c, err = dialCache(true, r.proxies[0].listen); err != nil {
					c = nil
					break
				}
			}
			time.Sleep(200 * time.Millisecond) // a retry's pause, not ordering
		}
		if c == nil {
			r.trouble(fmt.Sprintf("final reads: connect: %v", err))
			break
		}
		err = nil
	}
	if c != nil {
		c.close()
	}
	return out
}

// lostKeys returns the keys whose final read found nothing although a
// write of them was acknowledged after every delete of them returned (a
// delete of unknown outcome may come last: its key is not counted).
func lostKeys(history []porcupine.Operation) []string {
	type keyState struct {
		lastWrite, lastDel int64 // the latest call of an acknowledged write; the latest return of a delete
		final              *storecheck.Output
	}
	keys := map[string]*keyState{}
	for _, op := range history {
		in, out := op.Input.(storecheck.Input), op.Output.(storecheck.Output)
		ks := keys[in.Key]
		if ks == nil {
			ks = &keyState{lastWrite: -1, lastDel: -1}
			keys[in.Key] = ks
		}
		switch {
		case op.ClientId == 1<<20:
			ks.final = &out
		case in.Op == "DEL":
			ks.lastDel = max(ks.lastDel, op.Return)
		case (in.Op == "SET" || in.Op == "INCR" || in.Op == "APPEND") && !out.Unknown && !out.Err:
			ks.lastWrite = max(ks.lastWrite, op.Call)
		}
	}
	var lost []string
	for k, ks := range keys {
		if ks.final != nil && ks.final.Nil && ks.lastWrite > ks.lastDel {
			lost = append(lost, k)
		}
	}
	slices.Sort(lost)
	return lost
}
