package storecheck

import (
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

func op(client int, in Input, call int64, out Output, ret int64) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

// TestModel: histories a store could give pass, and ones that lose a
// write, bring back a deleted key or read a value never written fail;
// a request of unknown outcome may or may not have taken effect.
func TestModel(t *testing.T) {
	k := "k"
	set := func(v string) Input { return Input{Op: "SET", Key: k, Arg: v} }
	get := Input{Op: "GET", Key: k}
	for _, tc := range []struct {
		name string
		ops  []porcupine.Operation
		ok   bool
	}{
		{"read your write", []porcupine.Operation{op(0, set("1"), 0, Output{}, 1), op(1, get, 2, Output{Val: "1"}, 3)}, true},
		{"lost write", []porcupine.Operation{op(0, set("1"), 0, Output{}, 1), op(0, set("2"), 2, Output{}, 3), op(1, get, 4, Output{Val: "1"}, 5)}, false},
		{"concurrent", []porcupine.Operation{op(0, set("1"), 0, Output{}, 10), op(1, get, 2, Output{Nil: true}, 3)}, true},
		{"deleted comes back", []porcupine.Operation{op(0, set("1"), 0, Output{}, 1), op(0, Input{Op: "DEL", Key: k}, 2, Output{N: 1}, 3),
			op(1, get, 4, Output{Val: "1"}, 5)}, false},
		{"incr and append", []porcupine.Operation{op(0, Input{Op: "INCR", Key: k}, 0, Output{N: 1}, 1),
			op(0, Input{Op: "APPEND", Key: k, Arg: "5"}, 2, Output{N: 2}, 3), op(1, Input{Op: "INCR", Key: k}, 4, Output{N: 16}, 5)}, true},
		{"incr counted twice", []porcupine.Operation{op(0, Input{Op: "INCR", Key: k}, 0, Output{N: 1}, 1),
			op(1, Input{Op: "INCR", Key: k}, 2, Output{N: 3}, 3)}, false},
		{"unknown took effect", []porcupine.Operation{op(0, set("1"), 0, Output{Unknown: true}, never), op(1, get, 2, Output{Val: "1"}, 3)}, true},
		{"unknown did not", []porcupine.Operation{op(0, set("1"), 0, Output{Unknown: true}, never), op(1, get, 2, Output{Nil: true}, 3)}, true},
		{"incr of a leading zero", []porcupine.Operation{op(0, set("0"), 0, Output{}, 1), op(0, Input{Op: "APPEND", Key: k, Arg: "5"}, 2, Output{N: 2}, 3),
			op(1, Input{Op: "INCR", Key: k}, 4, Output{Err: true}, 5)}, true},
		{"expire keeps", []porcupine.Operation{op(0, set("1"), 0, Output{}, 1), op(0, Input{Op: "EXPIRE", Key: k}, 2, Output{N: 1}, 3),
			op(1, get, 4, Output{Val: "1"}, 5)}, true},
	} {
		res, _ := Check(tc.ops, 10*time.Second)
		if (res == porcupine.Ok) != tc.ok {
			t.Errorf("%s: %v, want ok %v", tc.name, res, tc.ok)
		}
	}
}

// TestUnknownReadsDecided: a history whose lost write comes after many
// reads and EXPIREs of unknown outcome (a proxy's clients timing out
// through a long stall) is decided: they change no state, so the checker
// does not try each of them at each point, which left a fault schedule's
// history (seed 89) undecided in its time limit.
func TestUnknownReadsDecided(t *testing.T) {
	k := "k"
	ops := []porcupine.Operation{op(0, Input{Op: "SET", Key: k, Arg: "1"}, 0, Output{}, 1)}
	for i := range 24 {
		in := Input{Op: "GET", Key: k}
		if i%2 == 1 {
			in.Op = "EXPIRE"
		}
		ops = append(ops, op(1+i, in, int64(2+i), Output{Unknown: true}, never))
	}
	// Each of the unknown requests may take effect after these: the
	// lost write is found only once the checker has tried them all.
	ops = append(ops, op(0, Input{Op: "SET", Key: k, Arg: "2"}, 100, Output{}, 101), op(0, Input{Op: "GET", Key: k}, 102, Output{Val: "1"}, 103))
	if res, _ := Check(ops, 20*time.Second); res != porcupine.Illegal {
		t.Errorf("a lost write after 24 reads of unknown outcome: %v, want it found", res)
	}
}

// startRedis starts a redis-server and returns its address.
func startRedis(t *testing.T) string {
	t.Helper()
	bin := realprog.Binary(t, "redis-server", "redis-server")
	port := realprog.FreePorts(t, 1)[0]
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := testproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	realprog.WaitListening(t, "redis-server", []int{port}, exited)
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// TestRealServerLinearizable: the workload against one redis-server,
// which is linearizable, gives a history the check passes; with
// transactions too, every one answered with each command's reply.
func TestRealServerLinearizable(t *testing.T) {
	addr := startRedis(t)
	for _, tx := range []int{0, 20} {
		t.Run(fmt.Sprintf("transactions %d%%", tx), func(t *testing.T) {
			r := Start(Config{Addrs: []string{addr}, Keys: 16, Seed: 1, Tx: tx, Prefix: fmt.Sprintf("lin%d:", tx)})
			// The workload runs a second, and on until 1000 requests are
			// answered: a machine busy with other work answers fewer in a
			// second (266 and 710 at 8 busy processes on 2 cores), which
			// says nothing of the store.
			time.Sleep(time.Second)
			deadline := time.Now().Add(time.Duration(realprog.Busy() * float64(realprog.Patience)))
			for r.Progress() < 1000 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond) // polling for a count, not ordering
			}
			history := r.Stop()
			if r.Answered < 1000 || r.Unknown > 0 || r.Retried > 0 {
				t.Fatalf("%d answered, %d discarded, %d unknown: %v", r.Answered, r.Retried, r.Unknown, r.Errors)
			}
			execs := 0
			for _, op := range history {
				if op.Input.(Input).Op == "EXEC" {
					execs++
				}
			}
			if tx > 0 && execs < r.Answered*tx/200 {
				t.Fatalf("%d of %d requests transactions", execs, r.Answered)
			}
			if res, why := Check(history, time.Minute); res != porcupine.Ok {
				t.Fatalf("%v: %s", res, why)
			}
			t.Logf("%d requests of 8 clients on %d keys, %d transactions: linearizable", len(history), len(r.Keys()), execs)
		})
	}
}

// TestLimitAndPace: each client sends at most Limit requests, one a Pace
// at most, and stops by itself.
func TestLimitAndPace(t *testing.T) {
	addr := startRedis(t)
	start := time.Now()
	r := Start(Config{Addrs: []string{addr}, Clients: 3, Keys: 4, Seed: 2, Limit: 20, Pace: 10 * time.Millisecond})
	r.wg.Wait() // the clients end by themselves
	elapsed := time.Since(start)
	history := r.Stop()
	if len(history) != 60 || r.Answered != 60 {
		t.Errorf("%d requests, %d answered; want 60 (3 clients, 20 each): %v", len(history), r.Answered, r.Errors)
	}
	// 20 requests a client, the first after one Pace: 200 ms at least.
	if elapsed < 20*10*time.Millisecond {
		t.Errorf("20 paced requests a client took %v, under 20 paces", elapsed)
	}
}

// TestParseErrors: INCR's own error is an outcome of the model; any other
// error reply - a proxy's for a server that is down - is an unknown
// outcome, as a timeout is: the command may have reached the server.
// TestNotSent: the replies that say the proxy sent nothing on are left
// out of the history; those after which the request may have reached its
// server are not.
func TestNotSent(t *testing.T) {
	for reply, want := range map[string]bool{
		"-TRYAGAIN Multiple keys request during rehashing of slot\r\n":     true,
		"-ERR Connection refused\r\n":                                      true,
		"-ERR Connection timed out\r\n":                                    false,
		"-ERR Connection reset by peer\r\n":                                false,
		"-ERR unknown\r\n":                                                 false,
		"-ERR Connection refused by the host\r\n":                          false,
		"-EXECABORT Transaction discarded because of previous errors.\r\n": true,
		"+OK\r\n": false,
	} {
		if got := notSent(reply); got != want {
			t.Errorf("%q: not sent %v, want %v", reply, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	incr := Input{Op: "INCR", Key: "k"}
	for _, c := range []struct {
		in     Input
		reply  string
		ok     bool
		output Output
	}{
		{incr, "-ERR value is not an integer or out of range\r\n", true, Output{Err: true}},
		{incr, "-ERR increment or decrement would overflow\r\n", true, Output{Err: true}},
		{incr, "-ERR Connection refused\r\n", false, Output{Err: true}},
		{incr, "-ERR Connection timed out\r\n", false, Output{Err: true}},
		{Input{Op: "SET", Key: "k", Arg: "1"}, "-ERR Connection refused\r\n", false, Output{Err: true}},
		{incr, ":7\r\n", true, Output{N: 7}},
	} {
		out, ok := parse(c.in, c.reply)
		if ok != c.ok || ok && !equal(out, c.output) {
			t.Errorf("%s %q: %+v, %v; want %+v, %v", c.in.Op, c.reply, out, ok, c.output, c.ok)
		}
	}
}
