package libmemcached_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/libmemcached"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// parseProgram reads hex-encoded server lists, one a line, parses each
// with memcached_servers_parse and prints "NULL", or one line per server
// (hex host, port, weight, unix socket or not) followed by the
// memcached_generate_hash of keys k0..k19 once the list is pushed into a
// ketama client.
const parseProgram = `
#include <libmemcached-1.0/memcached.h>
#include <stdio.h>
#include <string.h>

static int unhex(int c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

int main(void) {
	static char line[1 << 16], list[1 << 15];
	while (fgets(line, sizeof line, stdin)) {
		size_t n = strcspn(line, "\n") / 2;
		for (size_t i = 0; i < n; i++) list[i] = (char)(unhex(line[2*i]) << 4 | unhex(line[2*i+1]));
		list[n] = 0;
		memcached_server_st *l = memcached_servers_parse(list);
		if (!l) { printf("NULL\n"); continue; }
		uint32_t count = memcached_server_list_count(l);
		for (uint32_t i = 0; i < count; i++) {
			printf("S ");
			for (const char *p = l[i].hostname; *p; p++) printf("%02x", (unsigned char)*p);
			printf(" %u %u %d\n", l[i].port, l[i].weight, l[i].type == MEMCACHED_CONNECTION_UNIX_SOCKET);
		}
		memcached_st *m = memcached_create(NULL);
		memcached_behavior_set(m, MEMCACHED_BEHAVIOR_KETAMA, 1);
		memcached_server_push(m, l);
		printf("H");
		for (int k = 0; k < 20; k++) {
			char key[8];
			int len = snprintf(key, sizeof key, "k%d", k);
			printf(" %u", memcached_generate_hash(m, key, len));
		}
		printf("\n");
		memcached_server_list_free(l);
		memcached_free(m);
	}
	return 0;
}
`

// serverListInputs returns fixed lists of the forms memcached_servers_parse
// documents and its corner cases, then random strings over the bytes that
// matter to the parser.
func serverListInputs(n int) []string {
	in := []string{
		"", "a", "a,", ",a", "a,,b", "a, b", "a,  b", "a,\tb", "a:1:2, b:3 4,c",
		"[::1]:5:6", "[::1]", "[::1", "::1:11211", "/tmp/s:3", "/tmp/s 2", "h:-1",
		"h:70000:99999999999", "h:99999999999999999999", "h:1:99999999999999999999",
		"h:x", "h:1:2:3", "h: 7", "h:1 2 3", "h:+5:+6", "h:0:0", "localhost:11211:3,127.0.0.1:11212",
		"h:1\x00,x", "a,b,c,d,e,f,g", "host-with-long-name.example.com:22122:100",
		"h:" + strings.Repeat("9", 30),
	}
	r := rand.New(rand.NewPCG(21, 4))
	const alphabet = "abc/:[] ,-+09817\t\xe9."
	for len(in) < n {
		b := make([]byte, r.IntN(30))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		in = append(in, string(b))
	}
	return in
}

// TestParseServersLibmemcached compares ParseServers with
// memcached_servers_parse and, for lists New accepts, the ketama placement
// of the pushed list.
func TestParseServersLibmemcached(t *testing.T) {
	bin := buildC(t, parseProgram)
	inputs := serverListInputs(3000)
	var stdin bytes.Buffer
	for _, s := range inputs {
		stdin.WriteString(hex.EncodeToString([]byte(s)) + "\n")
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &stdin
	out, err := testproc.Output(cmd)
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	compared, placed := 0, 0
	for _, in := range inputs {
		var want []string
		for sc.Scan() && sc.Text() != "NULL" && !strings.HasPrefix(sc.Text(), "H") {
			want = append(want, sc.Text())
		}
		hashes := sc.Text()
		got, err := libmemcached.ParseServers(in)
		var have []string
		for _, s := range got {
			have = append(have, fmt.Sprintf("S %x %d %d %d", s.Host, s.Port, s.Weight, b2i(s.Socket)))
		}
		if hashes == "NULL" {
			if err == nil && len(got) > 0 {
				t.Errorf("ParseServers(%q) = %+v; libmemcached rejects it", in, got)
			}
			continue
		}
		compared++
		if err != nil || strings.Join(have, "\n") != strings.Join(want, "\n") {
			t.Errorf("ParseServers(%q) = %q, %v; libmemcached parses %q", in, have, err, want)
			continue
		}
		pool, err := libmemcached.New(libmemcached.Config{Distribution: "ketama"}, got)
		if errors.Is(err, kolco.ErrDuplicateNode) {
			continue
		}
		if err != nil {
			t.Errorf("New(ParseServers(%q)): %v", in, err)
			continue
		}
		placed++
		var idx []string
		for k := 0; k < 20; k++ {
			idx = append(idx, strconv.Itoa(pool.Index([]byte("k"+strconv.Itoa(k)))))
		}
		if h := "H " + strings.Join(idx, " "); h != hashes {
			t.Errorf("%q: Index gives %q, libmemcached %q", in, h, hashes)
		}
	}
	t.Logf("%d lists, %d parsed by libmemcached and compared, %d also placed (20 keys each)", len(inputs), compared, placed)
}

// TestParseServersLimits checks the inputs libmemcached cannot take: an
// entry that overruns its 8196-byte buffer (a crash in C) and a host of
// 1025 bytes or more (which libmemcached drops with the servers before it).
func TestParseServersLimits(t *testing.T) {
	for _, c := range []struct{ name, in string }{
		{"entry of 8196 bytes", strings.Repeat("y", 8196)},
		{"host of 1025 bytes", "a," + strings.Repeat("x", 1025) + ":1"},
		{"port beyond 2^64", "h:" + strings.Repeat("9", 21)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if s, err := libmemcached.ParseServers(c.in); !errors.Is(err, libmemcached.ErrBadServerList) {
				t.Errorf("ParseServers = %v, %v; want ErrBadServerList", s, err)
			}
		})
	}
	if s, err := libmemcached.ParseServers(strings.Repeat("x", 1024) + ":1"); err != nil || len(s) != 1 {
		t.Errorf("1024-byte host: %v, %v", s, err)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func FuzzParseServers(f *testing.F) {
	for _, s := range serverListInputs(40) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		servers, err := libmemcached.ParseServers(list)
		if err != nil {
			if !errors.Is(err, libmemcached.ErrBadServerList) {
				t.Fatalf("ParseServers(%q): %v", list, err)
			}
			return
		}
		for _, s := range servers {
			if s.Weight < 1 || s.Port < 0 || s.Port > 65535 || s.Socket != strings.HasPrefix(s.Host, "/") {
				t.Fatalf("ParseServers(%q) = %+v", list, servers)
			}
		}
		if len(servers) == 0 {
			return
		}
		_, err = libmemcached.New(libmemcached.Config{Distribution: "ketama"}, servers)
		if err != nil && !errors.Is(err, kolco.ErrDuplicateNode) && !errors.Is(err, kolco.ErrBadNodeID) {
			t.Fatalf("New(ParseServers(%q)): %v", list, err)
		}
	})
}
