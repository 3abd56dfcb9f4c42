package redisscan

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/resp"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// startRedis starts redis-server on a free port with extra arguments and
// returns its address.
func startRedis(t *testing.T, extra ...string) string {
	bin := realprog.Binary(t, "redis-server", "redis-server")
	port := realprog.FreePorts(t, 1)[0]
	cmd := exec.Command(bin, append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"}, extra...)...)
	if err := testproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	realprog.WaitListening(t, "redis-server", []int{port}, exited)
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// send runs commands on addr, pipelined, and fails on an error reply.
func send(t *testing.T, addr string, cmds [][]string) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	w := bufio.NewWriter(conn)
	for _, c := range cmds {
		resp.WriteCommand(w, c...)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	for _, c := range cmds {
		if _, err := resp.Read(br); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
	}
}

func listAll(t *testing.T, addr string, o Options) (map[string]int64, error) {
	got := map[string]int64{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := List(ctx, "tcp", addr, o, func(it Item) error {
		if _, dup := got[it.Key]; dup {
			t.Errorf("%q listed twice", it.Key)
		}
		got[it.Key] = it.Size
		return nil
	})
	return got, err
}

// TestListRealServer: every key of a redis-server, strings and a hash, a
// key with a CRLF and one of binary bytes, in database 3 behind a
// password, with sizes that grow with the value; nothing of database 0.
func TestListRealServer(t *testing.T) {
	addr := startRedis(t, "--requirepass", "s3cret")
	cmds := [][]string{{"AUTH", "s3cret"}, {"SET", "in-db0", "x"}, {"SELECT", "3"}}
	want := map[string]bool{"crlf\r\nkey": true, "bin\x00\xff": true, "big": true, "hash": true}
	for i := range 2500 {
		k := fmt.Sprintf("k:%d", i)
		cmds = append(cmds, []string{"SET", k, "v"})
		want[k] = true
	}
	cmds = append(cmds, []string{"SET", "crlf\r\nkey", "v"}, []string{"SET", "bin\x00\xff", "v"},
		[]string{"SET", "big", strings.Repeat("b", 100_000)})
	for i := range 1000 {
		cmds = append(cmds, []string{"HSET", "hash", strconv.Itoa(i), strings.Repeat("f", 100)})
	}
	send(t, addr, cmds)
	got, err := listAll(t, addr, Options{Password: "s3cret", DB: 3, Count: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("%d keys listed, want %d", len(got), len(want))
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("%q not listed", k)
		}
	}
	if got["big"] < 100_000 || got["hash"] < 100_000 || got["k:1"] <= 0 || got["k:1"] > 200 {
		t.Errorf("sizes: big %d, hash %d, k:1 %d", got["big"], got["hash"], got["k:1"])
	}
	if _, err := listAll(t, addr, Options{Password: "wrong"}); !errors.Is(err, ErrBad) || !strings.Contains(err.Error(), "AUTH") {
		t.Errorf("a wrong password: %v, want the AUTH error", err)
	}
	if _, err := listAll(t, addr, Options{}); !errors.Is(err, ErrBad) || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("no password: %v, want the server's NOAUTH", err)
	}
}

// TestListStopsOnCallbackError: an error from each ends the listing and
// is what List returns.
func TestListStopsOnCallbackError(t *testing.T) {
	addr := startRedis(t)
	send(t, addr, [][]string{{"SET", "a", "1"}, {"SET", "b", "2"}})
	stop := errors.New("enough")
	calls := 0
	err := List(context.Background(), "tcp", addr, Options{}, func(Item) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("List = %v after %d calls, want %v after 1", err, calls, stop)
	}
}

// script is a server that answered with fixed bytes.
type script struct {
	io.Reader
	sent bytes.Buffer
}

func (s *script) Write(p []byte) (int, error) { return s.sent.Write(p) }

// TestListReplies: replies that are not what the commands return get an
// error wrapping ErrBad or a truncation's, never a panic or a wrong key.
func TestListReplies(t *testing.T) {
	for _, c := range []struct {
		name, reply string
		keys        int
		bad         bool // else truncated
	}{
		{"one batch", "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n:10\r\n:20\r\n", 2, false},
		{"deleted after SCAN", "*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n$-1\r\n", 0, false},
		{"RESP3 null", "*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n_\r\n", 0, false},
		{"error reply", "-ERR unknown command\r\n", 0, true},
		{"no CR", "*2\n", 0, true},
		{"bad cursor", "*2\r\n$1\r\nx\r\n*0\r\n", 0, true},
		{"nil key", "*2\r\n$1\r\n0\r\n*1\r\n$-1\r\n", 0, true},
		{"bulk without CRLF", "*2\r\n$1\r\n0x\r\n", 0, true},
		{"huge length", "*2\r\n$1\r\n0\r\n*1\r\n$536870912\r\nab", 0, false},
		{"negative length", "*2\r\n$-5\r\n", 0, true},
		{"not an integer", "*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n+OK\r\n", 0, true},
		{"cut", "*2\r\n$1\r\n7\r\n*0\r\n", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			err := list(&script{Reader: strings.NewReader(c.reply)}, Options{}, func(Item) error { n++; return nil })
			switch {
			case c.keys > 0 && (err != nil || n != c.keys):
				t.Errorf("%d keys, %v; want %d, no error", n, err, c.keys)
			case c.keys == 0 && c.bad && !errors.Is(err, ErrBad):
				t.Errorf("%v, want ErrBad", err)
			case c.keys == 0 && !c.bad && c.name != "deleted after SCAN" && c.name != "RESP3 null" && !errors.Is(err, io.ErrUnexpectedEOF):
				t.Errorf("%v, want a truncated reply", err)
			}
		})
	}
}

// FuzzList: any reply bytes end the listing with keys or an error, never
// a panic or a hang; a listing ends without error only at a zero cursor,
// and lists only keys the replies hold.
func FuzzList(f *testing.F) {
	f.Add([]byte("*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n:10\r\n:20\r\n"))
	f.Add([]byte("+OK\r\n+OK\r\n*2\r\n$2\r\n12\r\n*1\r\n$1\r\na\r\n:1\r\n*2\r\n$1\r\n0\r\n*0\r\n"))
	f.Add([]byte("-NOAUTH Authentication required.\r\n"))
	f.Fuzz(func(t *testing.T, reply []byte) {
		for _, o := range []Options{{}, {Password: "p", DB: 2}} {
			err := list(&script{Reader: bytes.NewReader(reply)}, o, func(it Item) error {
				if !bytes.Contains(reply, []byte(it.Key)) {
					t.Fatalf("listed %q, which the replies do not hold: %q", it.Key, reply)
				}
				return nil
			})
			if err == nil && !bytes.Contains(reply, []byte("$1\r\n0\r\n")) {
				t.Fatalf("a listing ended without error and without a zero cursor: %q", reply)
			}
		}
	})
}
