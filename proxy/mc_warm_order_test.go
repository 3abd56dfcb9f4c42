package proxy

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// orderModel is memcached's outcome of a client's requests applied one
// after another, with flags 0 throughout.
type orderModel map[string]*string

// apply applies one request of the script to m and returns its command,
// its text and the reply memcached gives when requests are applied in
// order.
func (m orderModel) apply(step, k string) (memcache.Command, string, string) {
	v := m[k]
	value := func(s string) string { return fmt.Sprintf("VALUE %s 0 %d\r\n%s\r\nEND\r\n", k, len(s), s) }
	switch step {
	case "get":
		if v == nil {
			return memcache.CmdGet, "get " + k + "\r\n", "END\r\n"
		}
		return memcache.CmdGet, "get " + k + "\r\n", value(*v)
	case "incr":
		if v == nil {
			return memcache.CmdIncr, "incr " + k + " 5\r\n", "NOT_FOUND\r\n"
		}
		n, err := strconv.Atoi(*v)
		if err != nil {
			return memcache.CmdIncr, "incr " + k + " 5\r\n", "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"
		}
		s := strconv.Itoa(n + 5)
		m[k] = &s
		return memcache.CmdIncr, "incr " + k + " 5\r\n", s + "\r\n"
	case "append", "prepend":
		tail := step[:1] + strconv.Itoa(len(k)%10)
		req := fmt.Sprintf("%s %s 0 0 %d\r\n%s\r\n", step, k, len(tail), tail)
		if v == nil {
			return memcache.CmdAppend, req, "NOT_STORED\r\n"
		}
		s := *v + tail
		if step == "prepend" {
			s = tail + *v
		}
		m[k] = &s
		return memcache.CmdAppend, req, "STORED\r\n"
	case "cas":
		// No CAS value is this large in a fresh memcached: the value
		// held, if any, has another.
		req := "cas " + k + " 0 0 1 999999999\r\nz\r\n"
		if v == nil {
			return memcache.CmdCas, req, "NOT_FOUND\r\n"
		}
		return memcache.CmdCas, req, "EXISTS\r\n"
	case "delete":
		m[k] = nil
		if v == nil {
			return memcache.CmdDelete, "delete " + k + "\r\n", "NOT_FOUND\r\n"
		}
		return memcache.CmdDelete, "delete " + k + "\r\n", "DELETED\r\n"
	case "set":
		s := "7"
		m[k] = &s
		return memcache.CmdSet, "set " + k + " 0 0 1\r\n7\r\n", "STORED\r\n"
	}
	panic("unknown step " + step)
}

// orderWant is a request of the script and the reply it should get.
type orderWant struct {
	cmd        memcache.Command
	req, reply string
}

// script returns the requests for keys, one key's after another's, with
// the replies m gives, and their text.
func (m orderModel) script(keys []string) ([]orderWant, string) {
	// Each key is read first, so that the read falls back, then written
	// in one of three ways while the read may still be falling back.
	script := []string{"get", "", "get", "incr", "append", "prepend", "get", "cas", "append", "get", "delete", "get",
		"incr", "append", "set", "incr", "prepend", "get"}
	first := []string{"set", "delete", "append"}
	var wants []orderWant
	var pipeline strings.Builder
	for i, k := range keys {
		for _, step := range script {
			if step == "" {
				step = first[i%len(first)]
			}
			cmd, req, reply := m.apply(step, k)
			wants = append(wants, orderWant{cmd, req, reply})
			pipeline.WriteString(req)
		}
	}
	return wants, pipeline.String()
}

// TestWarmPipelinedClientKeepsOrder: one client pipelining mixed commands
// on keys a change moved, inside the migration window, gets every reply
// as if its requests were applied one after another, and the keys hold
// what that order leaves once the window has closed.
func TestWarmPipelinedClientKeepsOrder(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	s := startProxy(t, c.yaml("  distribution: ring\n  warm: {quiet: 1000000}\n", 0, 1, 2))
	cl := dial(t, s.Addr("p").String())
	all := testKeys("ord", 400)
	model := orderModel{}
	for _, k := range all {
		setValue(cl, k, "10", 0, 0)
	}
	was := routeNames(s.testPool("p"), all)
	reload(t, s, c.yaml("  distribution: ring\n  warm: {quiet: 1000000}\n", 0, 1, 2, 3))
	p := s.testPool("p")
	now := routeNames(p, all)
	var keys []string
	for i, k := range all {
		if was[i] != now[i] {
			keys = append(keys, k)
			ten := "10"
			model[k] = &ten
		}
	}
	if len(keys) < 40 {
		t.Fatalf("%d keys moved: too few", len(keys))
	}
	wants, pipeline := model.script(keys)
	sent := make(chan error, 1)
	go func() {
		_, err := cl.conn.Write([]byte(pipeline))
		sent <- err
	}()
	bad := 0
	for _, w := range wants {
		if got := cl.reply(w.cmd); got != w.reply {
			if bad++; bad <= 5 {
				t.Errorf("%q: %q, want %q", w.req, got, w.reply)
			}
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if bad > 0 {
		t.Errorf("%d of %d replies out of order", bad, len(wants))
	}
	m := p.place.Load().mig
	if m == nil {
		t.Fatal("the window closed before the requests were answered")
	}
	m.quietOnce.Do(func() { close(m.quietCh) })
	eventually(t, "the window to close", func() bool { return p.place.Load().mig == nil })
	wrong := 0
	for _, k := range keys {
		want := ""
		if v := model[k]; v != nil {
			want = *v
		}
		if got := getValue(cl, k); got != want {
			if wrong++; wrong <= 5 {
				t.Errorf("after the window %s holds %q, want %q", k, got, want)
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d keys hold a value out of order", wrong, len(keys))
	}
}
