package trace_test

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/sim/trace"
)

// fuzzRead reads in as format f and checks what every reader promises:
// no panic, an end (no more requests than bytes), an error that wraps
// ErrBadTrace and names a line (or, for the kolco header, ErrVersion;
// for detection, ErrFormat), and requests with sane fields. It then
// detects the format of in and summarizes what that reads.
func fuzzRead(t *testing.T, f trace.Format, in string) []trace.Request {
	if f != trace.Auto {
		fuzzRead(t, trace.Auto, in)
		fuzzSummarize(t, in)
	}
	r, err := trace.Open(strings.NewReader(in), f)
	if err != nil {
		if !errors.Is(err, trace.ErrBadTrace) && !errors.Is(err, trace.ErrVersion) && !errors.Is(err, trace.ErrFormat) {
			t.Fatalf("Open: %v wraps none of the package's errors", err)
		}
		return nil
	}
	var out []trace.Request
	for {
		req, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			if !errors.Is(err, trace.ErrBadTrace) || !strings.Contains(err.Error(), "line ") {
				t.Fatalf("error %q does not wrap ErrBadTrace naming a line", err)
			}
			return nil
		}
		if req.Time < 0 || req.Size < -1 || req.Command == "" || req.KeySize < 0 {
			t.Fatalf("request %+v", req)
		}
		if out = append(out, req); len(out) > len(in) {
			t.Fatalf("%d requests from %d bytes", len(out), len(in))
		}
	}
}

// FuzzKolco: the kolco reader, and what it reads writes back to itself.
func FuzzKolco(f *testing.F) {
	f.Add("#kolco-trace v1\n# time key size command result\n1767225600.000125 user:42 512 get hit\n")
	f.Add("#kolco-trace v1\n1.5 a%20b - set - extra fields\n2 \"\" 0 del miss\n")       // encoded, empty key, later fields
	f.Add("#kolco-trace v2\n1 k 1 get hit\n")                                           // a later version
	f.Add("#kolco-trace v1\n1.0000000001 k%zz 99999999999999999999 get hit\n")          // bad time, escape, size
	f.Add("#kolco-trace v1\r\n18446744073.709551615 k 1 GET hit\r\n\r\n#\n1 k 1 x y\n") // CRLF, overflowing time
	f.Fuzz(func(t *testing.T, in string) {
		reqs := fuzzRead(t, trace.Kolco, in)
		var b strings.Builder
		w := trace.NewWriter(&b)
		for _, r := range reqs {
			if err := w.Write(r); err != nil {
				return // a command the format cannot hold was read: only ASCII is written
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		back := fuzzRead(t, trace.Kolco, b.String())
		for i := range back {
			back[i].Command = reqs[i].Command // written in lowercase
			back[i].Op = reqs[i].Op
		}
		if len(reqs) > 0 && !reflect.DeepEqual(back, reqs) {
			t.Fatalf("read %+v, wrote and read back %+v", reqs, back)
		}
	})
}

// FuzzMonitor: the redis-cli MONITOR reader.
func FuzzMonitor(f *testing.F) {
	f.Add("OK\n1700000000.000001 [0 127.0.0.1:50000] \"get\" \"user:1\"\n")
	f.Add("1.5 [0 c:1] \"mset\" \"a\" \"\\x01\" \"b\"\n1.6 [0 lua] \"set\" \"k\" \"v\"\n") // odd MSET, a script's command
	f.Add("1.5 [0 c:1] \"eval\" \"s\" \"99\" \"k\"\n1.5 [0 c:1] \"eval\" \"s\"\n")         // numkeys past the end
	f.Add("1.5 [0 [::1]:1] \"get\" \"\\q\"\n")                                             // a bad escape
	f.Add("1.5 [0 c:1] \"get\" \"unterminated")                                            // the end inside an argument
	f.Add("1.5 [0 c:1]\n")                                                                 // no command
	f.Add("OK\n0.0 [00000000000] \"\" \"0\"")                                              // an empty command
	f.Fuzz(func(t *testing.T, in string) { fuzzRead(t, trace.Monitor, in) })
}

// FuzzWatch: the memcached watch reader.
func FuzzWatch(f *testing.F) {
	f.Add("OK\nts=1700000000.226050 gid=2 type=item_get key=foo status=not_found clsid=0 cfd=13 size=0\n" +
		"ts=1700000000.226057 gid=3 type=item_store key=foo status=stored cmd=set ttl=0 clsid=1 cfd=13 size=3\n")
	f.Add("ts=1.29124 gid=9 type=item_get key=a%2520b status=found clsid=1 cfd=1 size=5\nts=1.5 gid=1 skipped=3\n") // unpadded µs, out of order
	f.Add("ts=1.5 gid=1 type=item_store key=k status=stored clsid=1 cfd=1 size=1\n")                                // a store without cmd
	f.Add("ts=1.5000000 gid=x type=eviction\nERROR\n")                                                              // bad µs, gid
	f.Fuzz(func(t *testing.T, in string) { fuzzRead(t, trace.Watch, in) })
}

// FuzzTwitter: the Twitter cache-trace reader.
func FuzzTwitter(f *testing.F) {
	f.Add("timestamp,key,key_size,value_size,client_id,operation,ttl\n0,nz:u:eeW511W3dcH3de3d15ec,22,213,4,get,0\n")
	f.Add("1,a,b,40,0,4,set,3600\n2,k,1,0,4,GET,0\n") // a comma in a key
	f.Add("0,k,1,2,3,get\n")                          // six fields
	f.Add("1e9,k,-1,2,3,get,0\n,,,,,,\n")             // bad numbers, empty fields
	f.Fuzz(func(t *testing.T, in string) { fuzzRead(t, trace.Twitter, in) })
}

// fuzzSummarize summarizes in, its format detected, into a profile that
// holds what it read, if it reads.
func fuzzSummarize(t *testing.T, in string) {
	r, err := trace.Open(strings.NewReader(in), trace.Auto)
	if err != nil {
		return
	}
	p, err := trace.Summarize(r, trace.Options{SampleKeys: 2})
	if err != nil {
		return
	}
	if p.Requests < 1 || len(p.Keys) < 1 || p.End < p.Start || p.Sample.Rate <= 0 || p.Sample.Rate > 1 {
		t.Fatalf("profile %+v", p)
	}
}
