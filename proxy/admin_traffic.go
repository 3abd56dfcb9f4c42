package proxy

import (
	"fmt"
	"html/template"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kolco-dev/kolco/sim/trace"
)

// What an operator sees of a pool's traffic sample (see pool_traffic.go):
// its hot keys and their servers, how unevenly the servers are asked, the
// latest change predicted and measured, in /v1/pools, on the status page
// and in the metrics; and the trace itself, at
// GET /v1/pools/{pool}/trace, for `kolco plan --trace`.

// TrafficStatus is a pool's traffic sample as the admin endpoint reports
// it.
type TrafficStatus struct {
	// Since is when the sample began; it carries over reloads that
	// sample alike.
	Since time.Time `json:"since"`
	// Reads and Misses are the reads the clients sent since, and those
	// that found no value, as the clients saw them.
	Reads  uint64 `json:"reads"`
	Misses uint64 `json:"misses"`
	// KeyShare is the share of the keys the trace holds the requests of;
	// Traced the requests it holds, the latest, over TraceSeconds.
	KeyShare     float64 `json:"key_share"`
	Traced       int     `json:"traced_requests"`
	TraceSeconds float64 `json:"trace_seconds"`
	// HotKeys are the keys with the most requests, hottest first, and
	// HeavyKeys those with the most bytes of values, counted on one
	// request in 8 (their counts multiplied back).
	HotKeys   []HotKeyStatus `json:"hot_keys"`
	HeavyKeys []HotKeyStatus `json:"heavy_keys"`
	// Servers are each server's requests in the trace, and Skew the
	// busiest server's over the servers' mean (1 is even).
	Servers []ServerTraffic `json:"servers"`
	Skew    float64         `json:"skew"`
	// Change is the latest change of the pool's servers: what the sample
	// predicted, and what its window measured.
	Change *TrafficChange `json:"change,omitempty"`
	// HotCache is the pool's hot-key cache, when it keeps one
	// (hot_keys).
	HotCache *HotCacheStatus `json:"hot_cache,omitempty"`
}

// HotCacheStatus is a pool's hot-key cache as the admin endpoint reports
// it.
type HotCacheStatus struct {
	// Keys are the keys cached, hottest first: the sample's hottest,
	// taken again every second.
	Keys []string `json:"keys"`
	// Hits are the reads the proxy answered from the cache; Misses the
	// reads of cached keys it sent to their servers (none held, or too
	// old, or invalidated); Fills the values it stored; Invalidations
	// the values dropped by writes, by the servers' tracking, or all at
	// once (flush_all, a server's tracking lost).
	Hits          uint64 `json:"hits"`
	Misses        uint64 `json:"misses"`
	Fills         uint64 `json:"fills"`
	Invalidations uint64 `json:"invalidations"`
	// Untracked are the servers whose keys are not cached: a Redis
	// server without CLIENT TRACKING, or whose tracking connection is
	// down.
	Untracked []string `json:"untracked,omitempty"`
}

// status returns a pool's hot-key cache c as the admin endpoint reports
// it, or nil when the pool keeps none (c is nil).
func (c *hotCache) status() *HotCacheStatus {
	if c == nil {
		return nil
	}
	st := &HotCacheStatus{Keys: c.cached(), Hits: c.hits.Load(), Misses: c.misses.Load(), Fills: c.fills.Load(), Invalidations: c.invalidations.Load()}
	if c.front != nil {
		st.Untracked = c.front.untracked()
	}
	return st
}

// HotKeyStatus is one hot key.
type HotKeyStatus struct {
	// Key is the key, its first 250 bytes when Long is set (JSON holds
	// UTF-8: other bytes show as replacement characters); Server the
	// server that holds it now.
	Key    string `json:"key"`
	Long   bool   `json:"long,omitempty"`
	Server string `json:"server,omitempty"`
	// Count is its requests (HotKeys) or bytes (HeavyKeys) since the
	// sample began, estimated; it overstates them by at most Error.
	// Share is, for HotKeys, Count over the pool's requests; for
	// HeavyKeys, over the bytes the heavy keys' counters hold together
	// (the pool's bytes are not counted).
	Count float64 `json:"count"`
	Error float64 `json:"error"`
	Share float64 `json:"share"`
}

// ServerTraffic is one server's part of the trace.
type ServerTraffic struct {
	Name string `json:"name"`
	// Requests is the trace's requests to the server, Share their share.
	Requests int     `json:"requests"`
	Share    float64 `json:"share"`
	// Hot are the hot keys the server holds, hottest first.
	Hot []string `json:"hot_keys"`
}

// status returns a pool's traffic sample t as the admin endpoint reports
// it, its keys' servers those of pl, the pool's placement, with its
// hot-key cache hot; nil when the pool keeps no sample (t is nil).
func (t *trafficSample) status(pl *placement, hot *hotCache) *TrafficStatus {
	if t == nil {
		return nil
	}
	pl = pl.configured()
	ts := &TrafficStatus{Since: t.start, Reads: t.reads.Load(), Misses: t.misses.Load(), KeyShare: t.cfg.KeyShare}
	reqs := t.requests()
	ts.Traced = len(reqs)
	if len(reqs) > 1 {
		ts.TraceSeconds = float64(reqs[len(reqs)-1].Time-reqs[0].Time) / 1e9
	}
	perServer := map[string]int{}
	for _, r := range reqs {
		perServer[pl.owner([]byte(r.Key))]++
	}
	byReqs, byBytes, offered := t.hot()
	ts.HotKeys = hotStatus(pl, byReqs, float64(offered))
	ts.HeavyKeys = hotStatus(pl, byBytes, 0)
	busiest := 0
	for _, b := range pl.servers {
		st := ServerTraffic{Name: b.name(), Requests: perServer[b.name()], Hot: []string{}}
		if len(reqs) > 0 {
			st.Share = float64(st.Requests) / float64(len(reqs))
		}
		for _, h := range ts.HotKeys {
			if h.Server == st.Name {
				st.Hot = append(st.Hot, h.Key)
			}
		}
		busiest = max(busiest, st.Requests)
		ts.Servers = append(ts.Servers, st)
	}
	if len(reqs) > 0 {
		ts.Skew = float64(busiest) / (float64(len(reqs)) / float64(len(pl.servers)))
	}
	if w := t.change.Load(); w != nil {
		c := w.status()
		ts.Change = &c
	}
	ts.HotCache = hot.status()
	return ts
}

// hotStatus returns a summary's keys, their counts multiplied back to the
// whole stream; shares are of total, the requests the summary counted, or
// for 0 of the summary's own counts.
func hotStatus(pl *placement, keys []hotKey, total float64) []HotKeyStatus {
	if total == 0 {
		for _, k := range keys {
			total += float64(k.count)
		}
	}
	out := []HotKeyStatus{}
	for _, k := range keys {
		h := HotKeyStatus{Key: k.key, Long: k.long, Count: float64(k.count * topEvery), Error: float64(k.error * topEvery)}
		if total > 0 {
			h.Share = float64(k.count) / total
		}
		if !k.long {
			h.Server = pl.owner([]byte(k.key))
		}
		out = append(out, h)
	}
	return out
}

// handleTraffic serves GET /v1/pools/{pool}/trace: the pool's trace in
// kolco's trace format, version 1 (docs/trace.md).
func (a *adminReads) handleTraffic(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/pools/{pool}/trace", func(w http.ResponseWriter, r *http.Request) {
		p := a.pool(w, r)
		if p == nil {
			return
		}
		t := p.traffic
		if t == nil {
			writeJSON(w, http.StatusConflict, adminError{fmt.Sprintf("pool %q keeps no traffic sample: set traffic: {enabled: true}", p.name)})
			return
		}
		reqs := t.requests()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", p.name+".trace"))
		tw := trace.NewWriter(w)
		_ = tw.Comment(fmt.Sprintf("kolco proxy, pool %s: the latest %d requests of a share %g of the keys (those of the least sampling hashes, as kolco plan samples)",
			p.name, len(reqs), t.cfg.KeyShare))
		for _, req := range reqs {
			if err := tw.Write(req); err != nil {
				return // the client is gone
			}
		}
		_ = tw.Flush()
	})
}

// The traffic sample's metrics.
var (
	descTrafficReads = prometheus.NewDesc("kolco_proxy_traffic_reads_total",
		"Reads the clients sent, counted while the pool samples its traffic (traffic.enabled).", []string{"pool"}, nil)
	descTrafficMisses = prometheus.NewDesc("kolco_proxy_traffic_read_misses_total",
		"Reads that found no value as the clients saw them (a read a migration window answered from the previous server is a hit).", []string{"pool"}, nil)
	descTrafficSkew = prometheus.NewDesc("kolco_proxy_traffic_skew",
		"The busiest server's requests in the pool's trace over the servers' mean: 1 is even.", []string{"pool"}, nil)
	descTrafficHot = prometheus.NewDesc("kolco_proxy_traffic_hottest_key_share",
		"The hottest key's share of the pool's requests, estimated.", []string{"pool"}, nil)
	descHotCache = prometheus.NewDesc("kolco_proxy_hot_keys_total",
		"The pool's hot-key cache (hot_keys): reads it answered (kind=hits), reads of cached keys sent to their servers (misses), values stored (fills) and dropped (invalidations).", []string{"pool", "kind"}, nil)
	descChange = prometheus.NewDesc("kolco_proxy_change_cost",
		"The latest change of the pool's servers over its window, as the traffic sample predicted it (source=predicted) and as measured (source=measured): the figure named by kind.", []string{"pool", "source", "kind"}, nil)
)

// trafficCollector reports the pools' traffic samples.
type trafficCollector struct{ reads *adminReads }

func (c trafficCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTrafficReads, descTrafficMisses, descTrafficSkew, descTrafficHot, descHotCache, descChange} {
		ch <- d
	}
}

func (c trafficCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.reads.pools() {
		ts := p.traffic.status(p.place.Load(), p.hot)
		if ts == nil {
			continue
		}
		ch <- prometheus.MustNewConstMetric(descTrafficReads, prometheus.CounterValue, float64(ts.Reads), p.name)
		ch <- prometheus.MustNewConstMetric(descTrafficMisses, prometheus.CounterValue, float64(ts.Misses), p.name)
		ch <- prometheus.MustNewConstMetric(descTrafficSkew, prometheus.GaugeValue, ts.Skew, p.name)
		if len(ts.HotKeys) > 0 {
			ch <- prometheus.MustNewConstMetric(descTrafficHot, prometheus.GaugeValue, ts.HotKeys[0].Share, p.name)
		}
		if h := ts.HotCache; h != nil {
			for kind, v := range map[string]uint64{"hits": h.Hits, "misses": h.Misses, "fills": h.Fills, "invalidations": h.Invalidations} {
				ch <- prometheus.MustNewConstMetric(descHotCache, prometheus.CounterValue, float64(v), p.name, kind)
			}
		}
		if ts.Change == nil {
			continue
		}
		for _, f := range []struct {
			source string
			fig    *ChangeFigures
		}{{"predicted", ts.Change.Predicted}, {"measured", ts.Change.Measured}} {
			if f.fig == nil {
				continue
			}
			for _, k := range f.fig.kinds() {
				ch <- prometheus.MustNewConstMetric(descChange, prometheus.GaugeValue, k.v, p.name, f.source, k.kind)
			}
		}
	}
}

// kinds returns the figures by the kind the metrics name them.
func (f *ChangeFigures) kinds() []struct {
	kind string
	v    float64
} {
	return []struct {
		kind string
		v    float64
	}{{"moved_reads_share", f.MovedReads}, {"moved_keys", f.MovedKeys}, {"moved_bytes", f.MovedBytes}, {"copied_keys", f.CopiedKeys},
		{"reads", f.Reads}, {"misses", f.Misses}, {"added_misses", f.AddedMisses}, {"peak_server_rps", f.PeakRPS}, {"mean_server_rps", f.MeanRPS}}
}

// The status page's section on a pool's traffic sample.
var _ = template.Must(pageTemplate.New("traffic").Parse(trafficPageHTML))

const trafficPageHTML = `<div class="traffic">
<p>Traffic since <time datetime="{{time .Since}}">{{time .Since}}</time>: {{.Reads}} reads, {{.Misses}} missed. The trace holds the latest {{.Traced}} requests of {{pct .KeyShare}} of the keys, over {{printf "%.1f" .TraceSeconds}} s; the busiest server has <span class="skew">{{printf "%.2f" .Skew}}</span> times the servers' mean of them.</p>
<table class="hot-keys"><tr><th>hot key</th><th>server</th><th>requests</th><th>share</th></tr>
{{range .HotKeys}}<tr class="hot-key" data-server="{{.Server}}"><td><code>{{.Key}}</code>{{if .Long}}...{{end}}</td><td>{{.Server}}</td><td>{{printf "%.0f" .Count}} &plusmn; {{printf "%.0f" .Error}}</td><td>{{pct .Share}}</td></tr>
{{end}}</table>
<table class="traffic-servers"><tr><th>server</th><th>traced requests</th><th>share</th><th>hot keys</th></tr>
{{range .Servers}}<tr class="traffic-server" data-server="{{.Name}}"><td>{{.Name}}</td><td>{{.Requests}}</td><td>{{pct .Share}}</td><td>{{range $i, $k := .Hot}}{{if $i}}, {{end}}<code>{{$k}}</code>{{end}}</td></tr>
{{end}}</table>
{{with .HotCache}}<p class="hot-cache">Hot-key cache: {{len .Keys}} keys; {{.Hits}} reads answered by the proxy, {{.Misses}} sent to their servers; {{.Fills}} values stored, {{.Invalidations}} dropped.{{if .Untracked}} Not cached (no tracking): {{range $i, $s := .Untracked}}{{if $i}}, {{end}}{{$s}}{{end}}.{{end}}</p>
{{end}}{{with .Change}}<table class="change" data-done="{{.Done}}"><tr><th>change at <time datetime="{{time .At}}">{{time .At}}</time>, {{.ServersBefore}} -> {{.ServersAfter}} servers{{if .Warm}}, warm{{end}}; {{dur .Window}} after</th><th>predicted</th><th>measured</th></tr>
{{if .Error}}<tr><td colspan="3" class="down">Not predicted: {{.Error}}</td></tr>{{end}}
{{$p := .Predicted}}{{$m := .Measured}}
<tr><td>reads of keys that move</td><td>{{with $p}}{{pct .MovedReads}}{{end}}</td><td>{{with $m}}{{pct .MovedReads}}{{end}}</td></tr>
<tr><td>keys and bytes that move</td><td>{{with $p}}{{printf "%.0f" .MovedKeys}} keys, {{printf "%.0f" .MovedBytes}} bytes{{end}}</td><td>{{with $m}}{{printf "%.0f" .MovedKeys}} keys, {{printf "%.0f" .MovedBytes}} bytes; {{printf "%.0f" .CopiedKeys}} copied{{if .MovedNote}} ({{.MovedNote}}){{end}}{{end}}</td></tr>
<tr><td>reads that miss (added by the change)</td><td>{{with $p}}{{printf "%.0f" .Misses}} ({{printf "%.0f" .AddedMisses}}){{end}}</td><td>{{with $m}}{{printf "%.0f" .Misses}} ({{printf "%.0f" .AddedMisses}}){{end}}</td></tr>
<tr><td>busiest server's requests/s (mean)</td><td>{{with $p}}{{.PeakServer}}: {{printf "%.0f" .PeakRPS}} ({{printf "%.0f" .MeanRPS}}){{end}}</td><td>{{with $m}}{{.PeakServer}}: {{printf "%.0f" .PeakRPS}} ({{printf "%.0f" .MeanRPS}}){{end}}</td></tr>
</table>{{end}}
</div>
`
