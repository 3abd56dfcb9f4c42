package pymemcache_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kolco-dev/kolco/compat/pymemcache"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// pythonProgram reads a JSON list of server specs, then keys as "k<hex>"
// lines. For each key it prints, tab-separated: RendezvousHash.get_node for
// the key as a str (decoded from UTF-8 with surrogateescape), for the key as
// bytes, and the server HashClient._get_client picks for the str key ("-"
// when pymemcache rejects the key).
const pythonProgram = `
import json, sys
from pymemcache.client.hash import HashClient
from pymemcache.client.rendezvous import RendezvousHash

data = sys.stdin.buffer.read().split(b"\n")
servers = json.loads(data[0])
hc = HashClient(servers, allow_unicode_keys=True)
rh = RendezvousHash()
for s in hc.hasher.nodes:
    rh.add_node(s)
out = []
for line in data[1:]:
    if not line.startswith(b"k"):
        continue
    raw = bytes.fromhex(line[1:].decode())
    text = raw.decode("utf-8", "surrogateescape")
    via_client = "-"
    try:
        c = hc._get_client(text)
        via_client = c.server if isinstance(c.server, str) else "%s:%s" % c.server
    except Exception:
        pass
    out.append("%s\t%s\t%s" % (rh.get_node(text), rh.get_node(raw), via_client))
sys.stdout.write("\n".join(out) + "\n")
`

func python(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	msg := "Debian's /usr/bin/python3 with pymemcache not found (install python3-pymemcache)"
	if _, err := os.Stat(py); err == nil {
		if testproc.Run(exec.Command(py, "-c", "import pymemcache.client.rendezvous")) == nil {
			return py
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// textKeys returns n keys from a fixed seed: the empty key, ASCII keys,
// Latin-1, Cyrillic, CJK and emoji text, bytes that are not valid UTF-8,
// control characters and quotes, up to 250 bytes.
func textKeys(seed uint64, n int) [][]byte {
	r := rand.New(rand.NewPCG(seed, 3))
	alphabets := [][]rune{
		[]rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_-./{}"),
		[]rune("éèàüößñçÿ¡¿µ"),
		[]rune("привет мир ЖЩЭ"),
		[]rune("中文字符日本語한국어"),
		[]rune("😀🎉🚀€™"),
		[]rune("'\"\\\t\r\n\x00\x01\x7f "),
	}
	keys := [][]byte{{}, []byte("a"), []byte("it's"), []byte(`say "hi" it's`)}
	for len(keys) < n {
		var k []byte
		l := r.IntN(40)
		if r.IntN(20) == 0 {
			l = 60 + r.IntN(60)
		}
		mix := r.IntN(4) // 0: ASCII only
		for len(k) < l*2 && utf8.RuneCount(k) < l {
			a := alphabets[0]
			if mix > 0 && r.IntN(3) == 0 {
				a = alphabets[r.IntN(len(alphabets))]
			}
			k = utf8.AppendRune(k, a[r.IntN(len(a))])
			if mix == 3 && r.IntN(10) == 0 {
				k = append(k, byte(0x80+r.IntN(0x80))) // not valid UTF-8 on its own
			}
		}
		if len(k) > 250 {
			k = k[:250]
		}
		keys = append(keys, k)
	}
	return keys
}

var serverLists = [][]string{
	{"127.0.0.1:11211", "127.0.0.1:11212", "127.0.0.1:11213"},
	{"cache-a:11211", "cache-b", "[::1]:11211", "10.0.0.5:22122", "/var/run/memcached.sock", "unix:/tmp/mc2.sock"},
	{"mc0:11211", "mc1:11211", "mc2:11211", "mc3:11211", "mc4:11211", "mc5:11211", "mc6:11211", "mc7:11211", "mc8:11211", "mc9:11211"},
	{"only:11211"},
	{"localhost:011212", "127.0.0.1:11212", "host:+5"},
}

// TestRendezvousHash compares Index, IndexBytesKey and NodeName with
// pymemcache's RendezvousHash and HashClient for several server lists.
func TestRendezvousHash(t *testing.T) {
	py := python(t)
	total, viaClient := 0, 0
	for li, specs := range serverLists {
		pool, err := pymemcache.New(specs)
		if err != nil {
			t.Fatal(err)
		}
		keys := textKeys(uint64(li), 2000)
		var in bytes.Buffer
		js, _ := json.Marshal(specs)
		in.Write(js)
		for _, k := range keys {
			in.WriteString("\nk" + hex.EncodeToString(k))
		}
		in.WriteByte('\n')
		cmd := exec.Command(py, "-c", pythonProgram)
		cmd.Stdin = &in
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := testproc.Output(cmd)
		if err != nil {
			t.Fatalf("%s: %v\n%s", py, err, stderr.String())
		}
		names := pool.Names()
		sc := bufio.NewScanner(bytes.NewReader(out))
		mismatches := 0
		for i, k := range keys {
			if !sc.Scan() {
				t.Fatalf("list %d: python answered %d of %d keys", li, i, len(keys))
			}
			f := strings.Split(sc.Text(), "\t")
			if len(f) != 3 {
				t.Fatalf("list %d: line %q", li, sc.Text())
			}
			str, byt := names[pool.Index(k)], names[pool.IndexBytesKey(k)]
			if f[0] != str || f[1] != byt || (f[2] != "-" && f[2] != str) {
				if mismatches++; mismatches <= 5 {
					t.Errorf("list %d: key %q: python %q, Go str %q bytes %q", li, k, f, str, byt)
				}
			}
			if f[2] != "-" {
				viaClient++
			}
		}
		if mismatches > 0 {
			t.Errorf("list %d: %d of %d keys mismatched", li, mismatches, len(keys))
		}
		total += len(keys)
	}
	t.Logf("%d server lists, %d keys (each as str and as bytes), %d also through HashClient._get_client", len(serverLists), total, viaClient)
}
