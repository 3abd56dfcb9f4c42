package proxy

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// movedKeys writes n keys through cl with values "v-<key>" (numeric for
// every fourth), reloads s over the servers after, and returns the keys
// the change moved with the index of the server each lived on.
func movedKeys(t *testing.T, c *cluster, s *Server, cl *mc, yamlAfter string, n int) (keys []string, prev []int) {
	all := testKeys("w", n)
	for _, k := range all {
		setValue(cl, k, "v-"+k, 3, 0)
	}
	was := routeNames(s.testPool("p"), all)
	reload(t, s, yamlAfter)
	now := routeNames(s.testPool("p"), all)
	for i, k := range all {
		if was[i] != now[i] {
			j, _ := strconv.Atoi(strings.TrimPrefix(was[i], "m"))
			keys, prev = append(keys, k), append(prev, j)
		}
	}
	return keys, prev
}

// TestWarmCommandsOnMovedKeys: in a migration window every command on a
// key the change moved answers as if the key had always been on its new
// server, and leaves no copy on the previous one: writes and deletes
// delete it there, commands that change the value held move it first,
// gets and mg give the new server's CAS value.
func TestWarmCommandsOnMovedKeys(t *testing.T) {
	c := startCluster(t, 4)
	s := startProxy(t, c.yaml("  distribution: ring\n", 0, 1, 2))
	cl := dial(t, s.Addr("p").String())
	keys, prev := movedKeys(t, c, s, cl, c.yaml("  distribution: ring\n", 0, 1, 2, 3), 400)
	newServer := dialDirect(t, c.ms[3])
	type step struct {
		name  string
		run   func(t *testing.T, k string, prev *direct) // through the proxy; fails the test on a wrong reply
		value func(k string) string                      // the value after, "" for none
	}
	want := func(t *testing.T, req, reply string) {
		t.Helper()
		if got := cl.do(req); got != reply {
			t.Fatalf("%q on a moved key: %q, want %q", req, got, reply)
		}
	}
	same := func(k string) string { return "v-" + k }
	is := func(v string) func(string) string { return func(string) string { return v } }
	steps := []step{
		{"set", func(t *testing.T, k string, _ *direct) { want(t, "set "+k+" 5 0 2\r\nv1\r\n", "STORED\r\n") }, is("v1")},
		{"delete", func(t *testing.T, k string, _ *direct) { want(t, "delete "+k+"\r\n", "DELETED\r\n") }, is("")},
		{"md", func(t *testing.T, k string, _ *direct) { want(t, "md "+k+"\r\n", "HD\r\n") }, is("")},
		{"ms", func(t *testing.T, k string, _ *direct) { want(t, "ms "+k+" 2 T0\r\nv2\r\n", "HD\r\n") }, is("v2")},
		{"add", func(t *testing.T, k string, _ *direct) { want(t, "add "+k+" 0 0 1\r\nx\r\n", "NOT_STORED\r\n") }, same},
		{"append", func(t *testing.T, k string, _ *direct) { want(t, "append "+k+" 0 0 1\r\nx\r\n", "STORED\r\n") }, func(k string) string { return "v-" + k + "x" }},
		{"replace", func(t *testing.T, k string, _ *direct) { want(t, "replace "+k+" 0 0 1\r\nr\r\n", "STORED\r\n") }, is("r")},
		{"touch", func(t *testing.T, k string, _ *direct) { want(t, "touch "+k+" 100\r\n", "TOUCHED\r\n") }, same},
		{"gets then cas", func(t *testing.T, k string, _ *direct) {
			reply := cl.do("gets " + k + "\r\n")
			f := strings.Fields(reply)
			if len(f) < 5 || f[0] != "VALUE" {
				t.Fatalf("gets %s: %q", k, reply)
			}
			it, ok := newServer.get(k)
			if !ok || strconv.FormatUint(it.cas, 10) != f[4] {
				t.Fatalf("gets %s gave CAS %s; the new server holds %+v, %v", k, f[4], it, ok)
			}
			want(t, fmt.Sprintf("cas %s 0 0 1 %s\r\nc\r\n", k, f[4]), "STORED\r\n")
		}, is("c")},
		{"mg with flags", func(t *testing.T, k string, _ *direct) {
			reply := cl.do("mg " + k + " k v c Oab\r\n")
			it, ok := newServer.get(k)
			if wantReply := fmt.Sprintf("VA %d k%s c%d Oab\r\nv-%s\r\n", len(k)+2, k, it.cas, k); !ok || reply != wantReply {
				t.Fatalf("mg %s: %q, want %q", k, reply, wantReply)
			}
		}, same},
		{"incr", func(t *testing.T, k string, prev *direct) {
			prev.set(k, "10")
			want(t, "incr "+k+" 5\r\n", "15\r\n")
		}, is("15")},
		{"ma", func(t *testing.T, k string, prev *direct) {
			prev.set(k, "10")
			want(t, "ma "+k+" v D3\r\n", "VA 2\r\n13\r\n")
		}, is("13")},
		{"ms in add mode", func(t *testing.T, k string, _ *direct) { want(t, "ms "+k+" 1 ME\r\nx\r\n", "NS\r\n") }, same},
		{"gat", func(t *testing.T, k string, _ *direct) {
			if reply := cl.do("gat 100 " + k + "\r\n"); !strings.HasPrefix(reply, "VALUE "+k+" 3 ") {
				t.Fatalf("gat %s: %q", k, reply)
			}
		}, same},
	}
	if len(keys) < 2*len(steps) {
		t.Fatalf("%d keys moved: too few", len(keys))
	}
	for i, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			for _, j := range []int{2 * i, 2*i + 1} {
				k := keys[j]
				p := dialDirect(t, c.ms[prev[j]])
				st.run(t, k, p)
				if it, ok := p.get(k); ok && st.name != "gat" && st.name != "mg with flags" {
					t.Fatalf("%s: the previous server still holds %s: %+v", st.name, k, it)
				}
				value := st.value(k)
				if got := getValue(cl, k); got != value {
					t.Fatalf("after %s, %s reads %q, want %q", st.name, k, got, value)
				}
				it, ok := newServer.get(k)
				if value != "" && (!ok || it.value != value) {
					t.Fatalf("after %s the new server holds %+v, %v; want %q", st.name, it, ok, value)
				}
				if st.name == "touch" || st.name == "gat" {
					if it.ttl < 90 || it.ttl > 100 {
						t.Fatalf("after %s the TTL is %d, want 100", st.name, it.ttl)
					}
				}
			}
		})
	}
}
