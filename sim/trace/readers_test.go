package trace_test

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/sim/trace"
)

// readAll reads a trace of format f whole.
func readAll(t *testing.T, f trace.Format, in string) ([]trace.Request, trace.Stats, error) {
	t.Helper()
	r, err := trace.Open(strings.NewReader(in), f)
	if err != nil {
		return nil, trace.Stats{}, err
	}
	var out []trace.Request
	for {
		req, err := r.Next()
		if err == io.EOF {
			return out, r.Stats(), nil
		}
		if err != nil {
			if _, again := r.Next(); !errors.Is(again, err) && again.Error() != err.Error() {
				t.Errorf("Next after %v returned %v", err, again)
			}
			return out, r.Stats(), err
		}
		out = append(out, req)
	}
}

// sec is a time of the tests' traces: 1700000000 s and us microseconds.
func sec(us int64) int64 { return 1700000000*1e9 + us*1e3 }

// TestMonitor reads lines as redis-cli 7.0 printed them: escapes, a
// Unix socket and an IPv6 client, MSET, a script and its own commands,
// a command without key, DEL of two keys.
func TestMonitor(t *testing.T) {
	in := "OK\n" +
		`1700000000.000001 [0 127.0.0.1:50000] "get" "user:1"` + "\n" +
		`1700000000.000002 [0 127.0.0.1:50000] "SET" "a b" "v\"q\\n\\x01\xc3\xa9"` + "\n" +
		`1700000000.000003 [3 unix:/tmp/r.sock] "mset" "k1" "v1" "k2" "value2"` + "\n" +
		`1700000000.000004 [0 127.0.0.1:50000] "eval" "return redis.call('set',KEYS[1],ARGV[1])" "1" "key" "value"` + "\n" +
		`1700000000.000005 [0 lua] "set" "key" "value"` + "\n" +
		`1700000000.000006 [0 [::1]:6379] "PING"` + "\n" +
		`1700000000.000007 [0 127.0.0.1:50000] "GET" "k\xff1\x00"` + "\n" +
		`1700000000.000008 [0 127.0.0.1:50000] "del" "a" "b"`
	got, stats, err := readAll(t, trace.Monitor, in)
	if err != nil {
		t.Fatal(err)
	}
	want := []trace.Request{
		{Time: sec(1), Key: "user:1", Size: -1, Command: "get", Op: trace.Read},
		{Time: sec(2), Key: "a b", Size: int64(len(`v"q\n\x01é`)), Command: "set", Op: trace.Write},
		{Time: sec(3), Key: "k1", Size: 2, Command: "mset", Op: trace.Write},
		{Time: sec(3), Key: "k2", Size: 6, Command: "mset", Op: trace.Write},
		{Time: sec(4), Key: "key", Size: -1, Command: "eval", Op: trace.Other},
		{Time: sec(7), Key: "k\xff1\x00", Size: -1, Command: "get", Op: trace.Read},
		{Time: sec(8), Key: "a", Size: -1, Command: "del", Op: trace.Delete},
		{Time: sec(8), Key: "b", Size: -1, Command: "del", Op: trace.Delete},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requests:\n got %+v\nwant %+v", got, want)
	}
	if stats.Keyless != 1 || stats.Internal != 1 || stats.Lines != 9 {
		t.Errorf("stats %+v, want 1 keyless (PING), 1 internal (lua), 9 lines", stats)
	}
}

// TestMonitorBigValue: a value longer than the part of an argument kept
// whole is counted by its length.
func TestMonitorBigValue(t *testing.T) {
	big := strings.Repeat("x", 3<<19)
	got, _, err := readAll(t, trace.Monitor, `1700000000.5 [0 c:1] "set" "k" "`+big+`"`+"\n")
	if err != nil || len(got) != 1 || got[0].Size != 3<<19 || got[0].Key != "k" {
		t.Fatalf("got %v, %v; want one SET of k, 1.5 MiB", err, len(got))
	}
}

func TestKolcoRoundTrip(t *testing.T) {
	keys := []string{"user:1", "a b", "100%", `"q"`, "", "ключ", "\xff\x00\x7f", "tab\there", "%41"}
	var b strings.Builder
	w := trace.NewWriter(&b)
	var want []trace.Request
	for i, k := range keys {
		r := trace.Request{Time: sec(int64(i)) + 7, Key: k, Size: int64(i) - 1, Command: "get", Op: trace.Read, Result: trace.Result(i % 3)}
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got, _, err := readAll(t, trace.Auto, b.String())
	if err != nil {
		t.Fatalf("%v in\n%s", err, b.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v\nfile:\n%s", got, want, b.String())
	}
	if strings.Count(b.String(), "\n") != len(keys)+2 {
		t.Errorf("want the header, a comment and one line a request:\n%s", b.String())
	}
}

// TestKolcoLaterFields: fields after the fifth are a later version's
// additions, skipped.
func TestKolcoLaterFields(t *testing.T) {
	got, _, err := readAll(t, trace.Kolco, "#kolco-trace v1\n1.5 k 10 set - server-3 x=y\n")
	if err != nil || len(got) != 1 || got[0].Key != "k" || got[0].Op != trace.Write || got[0].Time != 1.5e9 {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestWatch(t *testing.T) {
	in := "OK\n" +
		// set foo: the store's own fetch, then the store
		"ts=1700000000.226050 gid=2 type=item_get key=foo status=not_found clsid=0 cfd=13 size=0\n" +
		"ts=1700000000.226057 gid=3 type=item_store key=foo status=stored cmd=set ttl=0 clsid=1 cfd=13 size=3\n" +
		// out of gid order: another thread's buffer arrives late
		"ts=1700000001.29124 gid=6 type=item_get key=sp%2520x status=found clsid=1 cfd=14 size=9\n" +
		"ts=1700000000.275998 gid=4 type=item_get key=foo status=found clsid=1 cfd=13 size=3\n" +
		// a get that misses, then the set that fills it (cache-aside)
		"ts=1700000000.300000 gid=5 type=item_get key=bar status=not_found clsid=0 cfd=13 size=0\n" +
		"ts=1700000001.400000 gid=7 type=item_get key=bar status=not_found clsid=0 cfd=13 size=0\n" +
		"ts=1700000001.400001 gid=8 type=item_store key=bar status=stored cmd=add ttl=0 clsid=1 cfd=13 size=5\n" +
		"ts=1700000001.500000 gid=9 type=eviction key=old fetch=no ttl=0 la=5 clsid=1 size=3\n" +
		"ts=1700000001.600000 gid=10 skipped=42\n"
	got, stats, err := readAll(t, trace.Auto, in)
	if err != nil {
		t.Fatal(err)
	}
	want := []trace.Request{
		{Time: sec(226057), Key: "foo", Size: 3, Command: "set", Op: trace.Write},
		{Time: sec(275998), Key: "foo", Size: 3, Command: "get", Op: trace.Read, Result: trace.Hit},
		{Time: sec(300000), Key: "bar", Size: -1, Command: "get", Op: trace.Read, Result: trace.Miss},
		{Time: sec(1029124), Key: "sp%20x", Size: 9, Command: "get", Op: trace.Read, Result: trace.Hit},
		{Time: sec(1400001), Key: "bar", Size: 5, Command: "add", Op: trace.Write},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requests:\n got %+v\nwant %+v", got, want)
	}
	if stats.Lost != 42 {
		t.Errorf("lost %d, want the 42 skipped", stats.Lost)
	}
}

func TestTwitter(t *testing.T) {
	in := "timestamp,key,key_size,value_size,client_id,operation,ttl\n" +
		"0,nz:u:eeW511W3dcH3de3d15ec,22,213,4,get,0\n" +
		"1,a,b,40,0,4,set,3600\n" +
		"# a comment\n" +
		"2,k,1,0,4,GET,0\n"
	got, _, err := readAll(t, trace.Auto, in)
	if err != nil {
		t.Fatal(err)
	}
	want := []trace.Request{
		{Time: 0, Key: "nz:u:eeW511W3dcH3de3d15ec", KeySize: 22, Size: 213, Command: "get", Op: trace.Read},
		{Time: 1e9, Key: "a,b", KeySize: 40, Size: 0, Command: "set", Op: trace.Write},
		{Time: 2e9, Key: "k", KeySize: 1, Size: -1, Command: "get", Op: trace.Read},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requests:\n got %+v\nwant %+v", got, want)
	}
}

// TestBadInput: each reader's error wraps ErrBadTrace and names the line
// at fault; a kolco trace of another version is ErrVersion.
func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		name   string
		format trace.Format
		in     string
		want   error
		line   string
	}{
		{"kolco no header", trace.Kolco, "1.0 k 1 get hit\n", trace.ErrBadTrace, "line 1"},
		{"kolco version 2", trace.Kolco, "#kolco-trace v2\n", trace.ErrVersion, "version 2"},
		{"kolco four fields", trace.Kolco, "#kolco-trace v1\n1.0 k 1 get hit\n1.0 k 1 get\n", trace.ErrBadTrace, "line 3"},
		{"kolco bad escape", trace.Kolco, "#kolco-trace v1\n# c\n1.0 k%4 1 get hit\n", trace.ErrBadTrace, "line 3"},
		{"kolco bad result", trace.Kolco, "#kolco-trace v1\n1.0 k 1 get found\n", trace.ErrBadTrace, "line 2"},
		{"kolco negative size", trace.Kolco, "#kolco-trace v1\n1.0 k -1 get hit\n", trace.ErrBadTrace, "line 2"},
		{"monitor unquoted", trace.Monitor, "OK\n1.5 [0 c:1] get k\n", trace.ErrBadTrace, "line 2"},
		{"monitor open quote", trace.Monitor, "1.5 [0 c:1] \"get\" \"k\n1.6 [0 c:1] \"get\"\n", trace.ErrBadTrace, "line 1"},
		{"monitor bad escape", trace.Monitor, "1.5 [0 c:1] \"get\" \"\\q\"\n", trace.ErrBadTrace, "line 1"},
		{"monitor no time", trace.Monitor, "1.5 [0 c:1] \"get\" \"a\"\nx [0 c:1] \"get\"\n", trace.ErrBadTrace, "line 2"},
		{"monitor truncated", trace.Monitor, "1.5 [0 c:1] \"get\" \"a", trace.ErrBadTrace, "line 1"},
		{"watch no ts", trace.Watch, "OK\ngid=1 type=item_get\n", trace.ErrBadTrace, "line 2"},
		{"watch bad key", trace.Watch, "ts=1.5 gid=1 type=item_get key=a%zz status=found cfd=1 size=1\n", trace.ErrBadTrace, "line 1"},
		{"watch refused", trace.Watch, "ERROR\n", trace.ErrBadTrace, "line 1"},
		{"twitter six fields", trace.Twitter, "0,k,1,2,3,get,0\n1,k,1,2,get,0\n", trace.ErrBadTrace, "line 2"},
		{"twitter bad number", trace.Twitter, "0,k,1,x,3,get,0\n", trace.ErrBadTrace, "line 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := readAll(t, c.format, c.in)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.line) {
				t.Errorf("error %v, want %v naming %q", err, c.want, c.line)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		in   string
		want trace.Format
	}{
		{"#kolco-trace v1\n", trace.Kolco},
		{"OK\n1700000000.000001 [0 127.0.0.1:50000] \"get\" \"k\"\n", trace.Monitor},
		{"OK\nts=1.5 gid=1 type=item_get\n", trace.Watch},
		{"0,k,1,2,3,get,0\n", trace.Twitter},
	} {
		got, err := trace.Detect([]byte(c.in))
		if err != nil || got != c.want {
			t.Errorf("Detect(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	if _, err := trace.Detect([]byte("hello world\n")); !errors.Is(err, trace.ErrFormat) {
		t.Errorf("an unknown format: %v, want ErrFormat", err)
	}
	if _, err := trace.ParseFormat("csv"); !errors.Is(err, trace.ErrFormat) || !strings.Contains(err.Error(), "monitor") {
		t.Errorf("ParseFormat(csv): %v, want ErrFormat listing the formats", err)
	}
}
