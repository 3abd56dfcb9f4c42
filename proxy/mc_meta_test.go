package proxy

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// metaStream exercises the meta commands with base64 keys (b), quiet mode
// (q), opaques (O) and returned keys (k); it ends with mn.
var metaStream = []string{
	"ms foo 3 T0 F5\r\nbar\r\n",
	"mg foo v f k O123\r\n",
	"mg missing v q O1\r\n",
	"mg missing v O2\r\n",
	"mg foo v q k\r\n",
	"ms foo 3 q\r\nbaz\r\n",
	"ms foo 3 q MA\r\nbaz\r\n",  // mode append of an existing key: HD, hidden
	"ms nosuch 1 q MR\r\nx\r\n", // replace of a missing key: NS, shown
	"md missing q O3\r\n",
	"md foo q\r\n",
	"mg foo v O4\r\n",
	"ma cnt N0 J13 v\r\n",
	"ma cnt q\r\n",
	"ma cnt v MI D5\r\n",
	"ma nosuch q O5\r\n",
	"ma nosuch O6\r\n",
	"ms Zm9vYg== 2 b\r\nhi\r\n",
	"mg Zm9vYg== b v k O7\r\n",
	"mg foob v k\r\n",
	"md Zm9vYg== b q\r\n",
	"mg Zm9vYg== b v k\r\n",
	"mn\r\n",
}

// readUntilMN reads from c until the reply ends with "MN\r\n".
func readUntilMN(t *testing.T, c *mc) string {
	t.Helper()
	var b bytes.Buffer
	for !bytes.HasSuffix(b.Bytes(), []byte("MN\r\n")) {
		line, err := c.r.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			if err == io.EOF {
				t.Fatalf("EOF after %q", b.String())
			}
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestMetaMatchesMemcached sends the same meta stream, pipelined, to a
// memcached directly and through the proxy to another fresh memcached: the
// bytes that come back must be the same, quiet replies hidden alike, and
// MN last.
func TestMetaMatchesMemcached(t *testing.T) {
	t.Parallel()
	direct, behind := startMemcached(t, 0), startMemcached(t, 0)
	s := startProxy(t, poolYAML("", behind))
	stream := strings.Join(metaStream, "")
	d, p := dial(t, direct.addr), dial(t, s.Addr("p").String())
	d.send(stream)
	p.send(stream)
	want, got := readUntilMN(t, d), readUntilMN(t, p)
	if got != want {
		t.Fatalf("meta replies differ:\nmemcached %q\nproxy     %q", want, got)
	}
	if !strings.Contains(want, "O123") || !strings.Contains(want, "VA 2 b k") && !strings.Contains(want, "Zm9vYg==") {
		t.Fatalf("stream did not exercise opaques and base64 keys: %q", want)
	}
	if got := p.do("me foo\r\n"); !strings.HasPrefix(got, "EN") && !strings.HasPrefix(got, "ME foo ") {
		t.Fatalf("me: %q", got)
	}
}

// TestMetaNoopOrdersAfterSlowReplies pipelines gets to several servers and
// an mn: MN comes only after every earlier reply, although the proxy
// answers mn itself.
func TestMetaNoopOrdersAfterSlowReplies(t *testing.T) {
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	s := startProxy(t, poolYAML("  hash: md5\n", ms...))
	c := dial(t, s.Addr("p").String())
	var req, want strings.Builder
	for i := range 200 {
		fmt.Fprintf(&req, "ms q%d 1 q\r\nx\r\n", i)
	}
	for i := range 200 {
		fmt.Fprintf(&req, "mg q%d v q k\r\nmg absent%d v q\r\n", i, i)
		fmt.Fprintf(&want, "VA 1 kq%d\r\nx\r\n", i)
	}
	req.WriteString("mn\r\n")
	want.WriteString("MN\r\n")
	c.send(req.String())
	if got := readUntilMN(t, c); got != want.String() {
		t.Fatalf("got %.300q\nwant %.300q", got, want.String())
	}
}

// TestProtocolErrorsKeepRepliesInStep: requests memcached would answer
// differently from what they seem (a quiet flag spelled "qq", more flags
// than it takes) are refused by the proxy, and an error to a classic
// command with noreply is not sent: either way, a client's later replies
// stay its own.
func TestProtocolErrorsKeepRepliesInStep(t *testing.T) {
	t.Parallel()
	m := startMemcached(t, 0)
	s := startProxy(t, poolYAML("  max_value_size: 1024\n", m))
	a := dial(t, s.Addr("p").String())
	b := dial(t, s.Addr("p").String())
	if got := b.do("set secret 0 0 6\r\nhunter\r\n"); got != "STORED\r\n" {
		t.Fatalf("set: %q", got)
	}
	// memcached reads "qq" as q: a miss gets no reply at all.
	a.send("mg nokey v qq\r\nmn\r\n")
	if got := a.reply(memcache.CmdMetaNoop); got != "MN\r\n" {
		t.Fatalf("mg with qq, then mn: %q", got)
	}
	if got := b.do("mg secret v\r\n"); got != "VA 6\r\nhunter\r\n" {
		t.Fatalf("another client's mg: %q", got)
	}
	// 17 flags: memcached would refuse them and run the data as a command.
	flags := " T0 F0 I C1 b k O1 s t c f v h l u N1 M1"
	if got := a.do("ms Zm9v 11" + flags + "\r\nflush_all 0\r\n"); got != "CLIENT_ERROR options flags are too long\r\n" {
		t.Fatalf("ms with 17 flags: %q", got)
	}
	if got := b.do("get secret\r\n"); got != "VALUE secret 0 6\r\nhunter\r\nEND\r\n" {
		t.Fatalf("after the refused ms, the value: %q", got)
	}
	// noreply: no error either.
	a.send("incr k abc noreply\r\ntouch k x noreply\r\nset big 0 0 2000 noreply\r\n" + strings.Repeat("v", 2000) + "\r\nmn\r\n")
	if got := a.reply(memcache.CmdMetaNoop); got != "MN\r\n" {
		t.Fatalf("errors to noreply requests were sent: %q", got)
	}
}
