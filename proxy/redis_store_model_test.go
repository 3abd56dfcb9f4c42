package proxy

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// storeModel runs a sequence of steps against a store pool and a model of
// it, a map: a client's SET, GET, DEL, INCR and APPEND, each reply
// compared with the model's; changes of the pool's servers to any
// non-empty subset of five, made while the mover is slowed, paused or
// not; restarts from the configuration and state files; and, at the end,
// a check on the servers that every key of the model is on the server the
// placement names and on no other.
type storeModel struct {
	t      *testing.T
	rs     []*redisServer
	f      *configFile
	s      *Server
	c      *rc
	model  map[string]string
	steps  int
	writes int
	// retried counts the requests answered -TRYAGAIN, each after the
	// pool's whole timeout, and sent again.
	retried int
	// timeout is the pool's timeout: how long a request for a moving key
	// waits for its move before -TRYAGAIN. 5 s stretched by how busy the
	// machine is: at load 50 on two cores a GET timed out at 5 s ("-ERR
	// Connection timed out").
	timeout time.Duration
}

func newStoreModel(t *testing.T, rs []*redisServer) *storeModel {
	lines := make([]string, len(rs))
	for i, r := range rs {
		lines[i] = fmt.Sprintf("%s:1 r%d", r.addr, i)
	}
	timeout := time.Duration(5*realprog.Busy()*1000) * time.Millisecond
	m := &storeModel{t: t, rs: rs, model: map[string]string{}, timeout: timeout,
		f: &configFile{t: t, path: filepath.Join(t.TempDir(), "nutcracker.yml"), lines: lines,
			extra: fmt.Sprintf("  redis: true\n  distribution: jump\n  timeout: %d\n  store: {enabled: true, rate: 500, batch: 4}\n", timeout.Milliseconds())}}
	m.f.write(0, 1, 2, 3)
	m.start()
	return m
}

func (m *storeModel) start() {
	m.s = mustStart(m.f)
	m.c = dialRedis(m.t, m.s.Addr("p").String())
}

// step runs one step chosen by b, a byte of the sequence, and k, the key
// it picks.
func (m *storeModel) step(b, k byte) {
	m.steps++
	key := "m:" + strconv.Itoa(int(k%32))
	switch op := b % 16; {
	case op < 3:
		v := strconv.Itoa(m.steps)
		m.expect([]string{"SET", key, v}, "+OK\r\n")
		m.model[key] = v
	case op < 6:
		want := "$-1\r\n"
		if v, ok := m.model[key]; ok {
			want = fmt.Sprintf("$%d\r\n%s\r\n", len(v), v)
		}
		m.expect([]string{"GET", key}, want)
	case op < 7:
		_, had := m.model[key]
		m.expect([]string{"DEL", key}, ":"+map[bool]string{true: "1", false: "0"}[had]+"\r\n")
		delete(m.model, key)
	case op < 9:
		v, had := m.model[key]
		n, err := strconv.ParseInt(v, 10, 64)
		if had && (err != nil || v != strconv.FormatInt(n, 10)) {
			if got := m.do("INCR", key); len(got) == 0 || got[0] != '-' {
				m.t.Fatalf("step %d: INCR %s of %q: %q, want an error", m.steps, key, v, got)
			}
			return
		}
		m.expect([]string{"INCR", key}, fmt.Sprintf(":%d\r\n", n+1))
		m.model[key] = strconv.FormatInt(n+1, 10)
	case op < 11:
		v := m.model[key] + "x"
		m.expect([]string{"APPEND", key, "x"}, fmt.Sprintf(":%d\r\n", len(v)))
		m.model[key] = v
	case op < 14:
		var servers []int
		for i := range m.rs {
			if k>>i&1 == 1 {
				servers = append(servers, i)
			}
		}
		if len(servers) == 0 {
			servers = []int{int(k) % len(m.rs)}
		}
		m.f.write(servers...)
		reloadFile(m.t, m.s, m.f.path)
	case op < 15:
		if pl := m.s.testPool("p").place.Load(); moveOf(pl) != nil {
			moveOf(pl).paused.Store(k%2 == 0)
		}
	default:
		shutdown(m.s)
		m.start()
	}
}

// expect sends args and checks the reply.
func (m *storeModel) expect(args []string, want string) {
	m.t.Helper()
	if got := m.do(args...); got != want {
		m.t.Fatalf("step %d: %v: %q, want %q", m.steps, args, got, want)
	}
}

// do sends args and returns the reply; a -TRYAGAIN that came after the
// pool's whole timeout is what the store answers a request for a key whose
// move is still closed then, having written nothing (a busy machine's
// slow moves give it), and the request is sent again, as a client does,
// for a minute at most. A -TRYAGAIN any sooner is returned, to fail the
// step: a request waits for its move up to the timeout.
func (m *storeModel) do(args ...string) string {
	m.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		sent := time.Now()
		got := m.c.do(args...)
		if !strings.HasPrefix(got, "-TRYAGAIN") || time.Since(sent) < m.timeout || time.Now().After(deadline) {
			return got
		}
		m.retried++
	}
}

// end lets the move finish and checks every key on the servers.
func (m *storeModel) end() {
	p := m.s.testPool("p")
	if pl := p.place.Load(); moveOf(pl) != nil {
		moveOf(pl).paused.Store(false)
	}
	waitMoved(m.t, p)
	keys := make([]string, 0, len(m.model))
	for k := range m.model {
		keys = append(keys, k)
	}
	checkPlaced(m.t, p, m.rs, keys, true)
	for k, v := range m.model {
		m.expect([]string{"GET", k}, fmt.Sprintf("$%d\r\n%s\r\n", len(v), v))
	}
	if m.retried > 0 {
		m.t.Logf("%d requests answered -TRYAGAIN after the pool's %v timeout and sent again", m.retried, m.timeout)
	}
}

// TestStoreModel: random sequences of client requests, changes of
// servers, pauses and restarts against a store pool (jump, so that the
// history of changes decides the placement) agree with a map, step by
// step, and leave every key on its server alone. A property test rather
// than a fuzz target: a step runs real servers and a proxy, seconds per
// sequence, which Go's fuzzer, expecting many executions a second, does
// not serve (its workers stall).
func TestStoreModel(t *testing.T) {
	t.Parallel()
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			// Each sequence on servers of its own, all at once: a
			// sequence mostly waits for its moves, paced at 500 keys a
			// second.
			t.Parallel()
			rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
			m := newStoreModel(t, rs)
			rng := rand.New(rand.NewPCG(seed, 42))
			for range 200 {
				m.step(byte(rng.IntN(256)), byte(rng.IntN(256)))
			}
			m.end()
		})
	}
}
