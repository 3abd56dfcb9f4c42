package proxy

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/sim/plan"
	"github.com/kolco-dev/kolco/sim/trace"
)

// TestTrafficConfig: the sample's settings are checked, and the options
// it does not work with are refused, each naming the setting at fault.
func TestTrafficConfig(t *testing.T) {
	for _, tc := range []struct {
		name, extra, key string // key "" for a valid configuration
	}{
		{"on", "  traffic: {enabled: true}\n", ""},
		{"on with every setting", "  traffic: {enabled: true, requests: 1000, key_share: 0.1, top_keys: 64, window: 5000}\n", ""},
		{"off with settings", "  traffic: {requests: 1000}\n", ""},
		{"requests negative", "  traffic: {enabled: true, requests: -1}\n", "traffic.requests"},
		{"requests too many", "  traffic: {enabled: true, requests: 4194305}\n", "traffic.requests"},
		{"key_share over 1", "  traffic: {enabled: true, key_share: 1.5}\n", "traffic.key_share"},
		{"key_share negative", "  traffic: {enabled: true, key_share: -0.1}\n", "traffic.key_share"},
		{"key_share NaN", "  traffic: {enabled: true, key_share: .nan}\n", "traffic.key_share"},
		{"top_keys too many", "  traffic: {enabled: true, top_keys: 1025}\n", "traffic.top_keys"},
		{"window negative", "  traffic: {enabled: true, window: -1}\n", "traffic.window"},
		{"redis", "  redis: true\n  traffic: {enabled: true}\n", ""},
		{"random", "  distribution: random\n  traffic: {enabled: true}\n", "traffic.enabled"},
		{"replicas", "  distribution: ring\n  replicas: 2\n  traffic: {enabled: true}\n", "traffic.enabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yaml := "p:\n  listen: 127.0.0.1:0\n" + tc.extra + "  servers:\n   - 127.0.0.1:11211:1\n   - 127.0.0.1:11212:1\n"
			wantConfigKey(t, yaml, tc.key)
		})
	}
}

// TestTrafficCheckExplains: kolco proxy --check says what a pool samples.
func TestTrafficCheckExplains(t *testing.T) {
	for _, tc := range []struct{ extra, want string }{
		{"", "  traffic: not sampled (traffic.enabled)\n"},
		{"  traffic: {enabled: true, requests: 1000, key_share: 0.5}\n", "  traffic: sampled: the 32 hottest keys by requests and by bytes, and the latest 1000 requests of a share 0.5 of the keys"},
	} {
		wantExplained(t, tc.extra, tc.want)
	}
}

// TestSampleThroughProxy: a pool with the sample on, in front of two real
// memcached servers, counts its clients' reads and misses, finds the hot
// key and the server that holds it, shows them in /v1/pools, on the
// status page and in the metrics, and hands out a trace that kolco plan
// reads, holding every request with its size and result.
func TestSampleThroughProxy(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\n"+poolYAML("  distribution: ring\n  traffic: {enabled: true, top_keys: 4}\n", ms...))
	c := dial(t, s.Addr("p").String())
	c.do("set hot 0 0 5\r\nhello\r\n")
	const rounds = 400
	for i := range rounds {
		c.do("get hot\r\n")
		c.do(fmt.Sprintf("get cold:%d\r\n", i)) // a miss
	}
	c.do("get hot cold:0 cold:1 cold:2 cold:3 cold:4\r\n") // split over both servers, most likely
	var st PoolStatus
	if code := adminGet(t, s, "/v1/pools/p", "", &st); code != http.StatusOK {
		t.Fatalf("GET /v1/pools/p: %d", code)
	}
	tr := st.Traffic
	if tr == nil {
		t.Fatal("no traffic in /v1/pools/p")
	}
	if tr.Reads != 2*rounds+6 || tr.Misses != rounds+5 {
		t.Errorf("%d reads, %d missed; want %d and %d", tr.Reads, tr.Misses, 2*rounds+6, rounds+5)
	}
	if tr.Traced != 2*rounds+7 {
		t.Errorf("%d requests traced, want %d", tr.Traced, 2*rounds+7)
	}
	owner := configuredOwnerOf(s.testPool("p"), "hot")
	if len(tr.HotKeys) == 0 || tr.HotKeys[0].Key != "hot" {
		t.Fatalf("hot keys %+v, want hot first", tr.HotKeys)
	}
	if h := tr.HotKeys[0]; st.Servers[serverIndex(st, h.Server)].Addr != owner || h.Share < 0.3 {
		t.Errorf("hot key %+v: want on %s with about half the requests", h, owner)
	}
	if tr.Skew < 1 {
		t.Errorf("skew %v, want at least 1", tr.Skew)
	}

	resp, err := http.Get("http://" + s.AdminAddr().String() + "/v1/pools/p/trace")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd, err := trace.Open(resp.Body, trace.Auto)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := trace.Summarize(rd, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if prof.Requests != 2*rounds+7 || prof.Reads != 2*rounds+6 || prof.Hits != rounds+1 || prof.Misses != rounds+5 {
		t.Errorf("the trace: %d requests, %d reads, %d hits, %d misses", prof.Requests, prof.Reads, prof.Hits, prof.Misses)
	}
	for _, k := range prof.Keys {
		if k.Key == "hot" && (k.Size != 5 || k.Requests != rounds+2) {
			t.Errorf("hot in the trace: %+v", k)
		}
	}
	pl := s.testPool("p").place.Load().configured()
	if _, err := plan.Compute(plan.Config{Label: "ring", Before: placedBy(pl), After: placedBy(pl), Traffic: &plan.Traffic{Profile: prof}}); err != nil {
		t.Errorf("plan from the trace: %v", err)
	}

	page := httpBody(t, "http://"+s.AdminAddr().String()+"/status")
	if !strings.Contains(page, `class="hot-key" data-server="`+tr.HotKeys[0].Server+`"><td><code>hot</code>`) {
		t.Errorf("the status page shows no hot key hot")
	}
	metrics := httpBody(t, "http://"+s.AdminAddr().String()+"/metrics")
	if want := fmt.Sprintf("kolco_proxy_traffic_read_misses_total{pool=\"p\"} %d", rounds+5); !strings.Contains(metrics, want) {
		t.Errorf("the metrics lack %q", want)
	}
}

// TestSampleTraceOff: a pool without the sample answers the trace's path
// with a conflict, and /v1/pools shows no traffic.
func TestSampleTraceOff(t *testing.T) {
	t.Parallel()
	m := startMemcached(t, 0)
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\n"+poolYAML("", m))
	if code := adminGet(t, s, "/v1/pools/p/trace", "", nil); code != http.StatusConflict {
		t.Errorf("GET the trace of a pool without a sample: %d, want 409", code)
	}
	var st PoolStatus
	adminGet(t, s, "/v1/pools/p", "", &st)
	if st.Traffic != nil {
		t.Errorf("traffic %+v of a pool without a sample", st.Traffic)
	}
}

func serverIndex(st PoolStatus, name string) int {
	for i, s := range st.Servers {
		if s.Name == name {
			return i
		}
	}
	return 0
}

func httpBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSampleSurvivesReload: a reload that samples alike keeps the sample
// (its requests and counts), one that changes the sample's settings
// starts a new one, and one that turns it off drops it.
func TestSampleSurvivesReload(t *testing.T) {
	m := startMemcached(t, 0)
	yaml := func(extra string) string { return "kolco:\n  admin_listen: \":0\"\n" + poolYAML(extra, m) }
	s := startProxy(t, yaml("  traffic: {enabled: true}\n"))
	c := dial(t, s.Addr("p").String())
	for range 10 {
		c.do("get k\r\n")
	}
	traced := func() int {
		var st PoolStatus
		adminGet(t, s, "/v1/pools/p", "", &st)
		if st.Traffic == nil {
			return -1
		}
		return st.Traffic.Traced
	}
	reload(t, s, yaml("  traffic: {enabled: true}\n  max_pending: 64\n"))
	if got := traced(); got != 10 {
		t.Errorf("after a reload that samples alike: %d requests traced, want the 10 before it", got)
	}
	reload(t, s, yaml("  traffic: {enabled: true, requests: 1000}\n  max_pending: 64\n"))
	if got := traced(); got != 0 {
		t.Errorf("after a reload that changes the sample: %d requests traced, want a new sample's 0", got)
	}
	reload(t, s, yaml("  max_pending: 64\n"))
	if got := traced(); got != -1 {
		t.Errorf("after a reload that turns the sample off: %d requests traced, want no sample", got)
	}
}
