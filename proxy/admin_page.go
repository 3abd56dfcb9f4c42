package proxy

import (
	"bytes"
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/kolco-dev/kolco/fleet"
)

// The status page is for an operator's browser: every pool's servers,
// their health and shares of keys, where they come from, the revision
// and fingerprint of the placement, and whether this proxy agrees with
// its peers (kolco.admin_peers). It is rendered here, with no asset from
// elsewhere; a few lines of script keep the times' ages current and reload
// the page every few seconds (?refresh=N, 0 for never). Times are written
// as the logs and kolco status write them, in UTC (RFC 3339) with their
// age, never in the browser's own format; durations in ms or s.

// defaultRefresh is how often the page reloads itself, in seconds.
const defaultRefresh = 5

// pageData is what the page shows.
type pageData struct {
	Addr    string
	Now     time.Time
	Refresh int
	Peers   []string
	// Same are the peers that were this proxy, or a proxy already asked
	// under another address, each with what it was: counted once.
	Same  []string
	Pools []pagePool
}

// pagePool is a pool on the page.
type pagePool struct {
	PoolStatus
	// Agree is "yes", "no" (a peer differs) or "unknown" (a peer could not
	// be asked, or the servers may be behind the source); Summary says
	// it in words.
	Agree   string
	Summary string
	Peers   []pagePeer
}

// pagePeer is a row of a pool's agreement table.
type pagePeer struct {
	Name, Fingerprint, State string
	Revision                 int64
	Since                    time.Time
}

// isPage reports whether r asks for the page rather than JSON.
func isPage(r *http.Request) bool { return r.URL.Path == "/" || r.URL.Path == "/status" }

// handlePage serves the page at / and /status.
func (a *adminReads) handlePage(mux *http.ServeMux, token []byte) {
	serve := func(w http.ResponseWriter, r *http.Request) {
		refresh := defaultRefresh
		if q := r.URL.Query().Get("refresh"); q != "" {
			n, err := strconv.Atoi(q)
			if err != nil || n < 0 {
				http.Error(w, "refresh: want a number of seconds, 0 for never", http.StatusBadRequest)
				return
			}
			refresh = n
		}
		peers, client := a.fleet.asker()
		d := pageData{Addr: r.Host, Now: time.Now(), Refresh: refresh, Peers: a.config().Global.AdminPeers}
		answers, same := askPeers(r.Context(), client, peers, token, a.fleet.instance())
		d.Same = sameNames(same, answers, a.fleet.instance())
		for _, e := range a.entries() {
			d.Pools = append(d.Pools, pageOf(e.status(), answers))
		}
		var b bytes.Buffer
		if err := pageTemplate.Execute(&b, d); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'")
		_, _ = w.Write(b.Bytes())
	}
	mux.HandleFunc("GET /status", serve)
	mux.HandleFunc("GET /{$}", serve)
}

// pageOf returns a pool for the page, its agreement with the peers'
// answers.
func pageOf(ps PoolStatus, answers []fleet.Answer) pagePool {
	pp := pagePool{PoolStatus: ps}
	ms := ps.Membership
	if len(answers) == 0 {
		switch {
		case ms.Stale:
			pp.Agree, pp.Summary = "unknown", "the servers in use may be behind "+ms.Source+": "+ms.Error
		case ms.Source == "configuration":
			pp.Agree, pp.Summary = "yes", "servers from the configuration file; no peers to compare with (kolco.admin_peers)"
		default:
			pp.Agree, pp.Summary = "yes", "in step with "+ms.Source+"; no peers to compare with (kolco.admin_peers)"
		}
		return pp
	}
	a := agreement("this proxy", ms, answers)
	v := a.Verdict()
	pp.Agree, pp.Summary = agreeClass[v.State], v.Text
	for _, name := range a.Agreeing {
		r, st := findReport(name, ms, answers)
		pp.Peers = append(pp.Peers, pagePeer{Name: name, Fingerprint: r.Fingerprint, Revision: r.Revision, Since: r.Since, State: "agrees" + staleWhy(st)})
	}
	for _, d := range a.Differing {
		_, st := findReport(d.Name, ms, answers)
		pp.Peers = append(pp.Peers, pagePeer{Name: d.Name, Fingerprint: d.Fingerprint, Revision: d.Revision, Since: d.Since, State: "differs" + staleWhy(st)})
	}
	for _, u := range a.Unreachable {
		pp.Peers = append(pp.Peers, pagePeer{Name: u.Name, State: "unreachable: " + u.Err.Error()})
	}
	return pp
}

// agreeClass is the page's word for a fleet.Verdict's state, which its
// style colours.
var agreeClass = map[string]string{"agree": "yes", "differ": "no", "unknown": "unknown"}

// findReport returns the report of the process name for the pool, and
// its status.
func findReport(name string, ms MembershipStatus, answers []fleet.Answer) (fleet.Report, MembershipStatus) {
	for _, p := range answers {
		if p.Addr == name {
			st := p.Pools[ms.Pool]
			return st.Report(name), st
		}
	}
	return ms.Report(name), ms
}

// staleWhy says why a process's view may be behind its source, or "".
func staleWhy(st MembershipStatus) string {
	if !st.Stale {
		return ""
	}
	return "; may be behind its source: " + st.Error
}

// sameNames says what each peer of same was: this proxy, or the proxy
// already asked under another address.
func sameNames(same, distinct []fleet.Answer, self string) []string {
	var out []string
	for _, a := range same {
		if a.Instance == self {
			out = append(out, a.Addr+" is this proxy")
			continue
		}
		for _, d := range distinct {
			if d.Instance == a.Instance {
				out = append(out, a.Addr+" is "+d.Addr)
				break
			}
		}
	}
	return out
}

// pageTime writes t as the logs and kolco status write times: in UTC, to
// the second (RFC 3339).
func pageTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// pageDuration writes d as the proxy's other outputs write durations: µs
// under a millisecond, ms under a second, else s, to three figures.
func pageDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return strconv.FormatInt(d.Microseconds(), 10) + " µs"
	case d < time.Second:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'g', 3, 64) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'g', 3, 64) + " s"
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"pct":  func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" },
	"time": pageTime,
	"dur":  pageDuration,
}).Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>kolco proxy {{.Addr}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.5em}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:.2em .8em;border-bottom:1px solid #ddd;text-align:left}
code{font-size:.95em}.down{color:#b00}.up{color:#070}td.failing{color:#b00;font-weight:bold}td.down{font-weight:bold}
p.agreement[data-agree=yes]{color:#070}p.agreement[data-agree=no]{color:#b00;font-weight:bold}p.agreement[data-agree=unknown]{color:#a60}
meter{width:8em}
</style></head>
<body data-now="{{time .Now}}" data-refresh="{{.Refresh}}">
<h1>kolco proxy {{.Addr}}</h1>
<p>As of <time datetime="{{time .Now}}">{{time .Now}}</time>.{{if .Peers}} Peers: {{range $i, $p := .Peers}}{{if $i}}, {{end}}{{$p}}{{end}}.{{end}}{{if .Same}} <span class="same">Counted once: {{range $i, $p := .Same}}{{if $i}}; {{end}}{{$p}}{{end}}.</span>{{end}}</p>
{{range .Pools}}<section class="pool" data-pool="{{.Name}}">
<h2>{{.Name}} <small>on {{.Listen}}: {{.Distribution}}{{if .Hash}}, {{.Hash}}{{end}}, ejection {{.Ejection}}{{if gt .Replicas 1}}, {{.Replicas}} copies{{end}}</small></h2>
<p>Servers from <span class="source">{{if eq .Membership.Source "configuration"}}the configuration file{{else}}{{.Membership.Source}}{{end}}</span>, revision <span class="revision">{{.Membership.Revision}}</span>,
fingerprint <code class="fingerprint">{{.Membership.Fingerprint}}</code>, since <time datetime="{{time .Membership.Since}}">{{time .Membership.Since}}</time>.
{{if .Membership.Stale}}<span class="down">Stale: {{.Membership.Error}}</span>{{end}}
{{if .Membership.Drained}}Drained: {{range .Membership.Drained}}{{.}} {{end}}{{end}}</p>
<p class="agreement" data-agree="{{.Agree}}">{{.Summary}}</p>
{{with .Membership.Gossip}}{{template "gossip" .}}{{end}}
{{with .Traffic}}{{template "traffic" .}}{{end}}
{{with .Move}}<p class="move" data-state="{{.State}}">Moving keys to their new servers: {{.State}}{{if .Waiting}} ({{.Waiting}}){{end}}; {{.Moved}} moved by the mover and {{.MovedByRequests}} by requests, of about {{.ToMove}}; {{printf "%.0f" .Rate}} keys/s{{if ge .ETA 0.0}}, about {{printf "%.0f" .ETA}} s left{{end}}.{{if .LastError}} <span class="down">Last error: {{.LastError}}</span>{{end}}</p>{{end}}
{{range .Servers}}{{$server := .Name}}{{range .Replicas}}<p class="replica" data-readable="{{.Readable}}">Replica of {{$server}}: {{.Addr}}, {{if ge .LagMs 0.0}}{{printf "%.0f" .LagMs}} ms behind{{else}}not answering{{end}}; {{if .Readable}}read{{else}}<span class="down">not read</span>{{end}}</p>{{end}}{{end}}
{{with .Failovers}}<ul class="failovers">{{range .}}<li>Failover: {{.Server}} from {{.From}} to {{.To}} at <time datetime="{{time .At}}">{{time .At}}</time>{{if gt .Unavailable 0.0}}, after {{printf "%.1f" .Unavailable}} s of failures{{end}}</li>{{end}}</ul>{{end}}
{{with .StateMissing}}<p class="state-missing down">Started without its placement history ({{.Why}}) while its servers held {{.Items}} items, at <time datetime="{{time .Since}}">{{time .Since}}</time>: keys are placed afresh, and reads of those that moved miss{{if ge .Misses 0}} - {{.Misses}} keys at the last count{{if not .CheckedAt.IsZero}}, <time datetime="{{time .CheckedAt}}">{{time .CheckedAt}}</time>{{end}}{{end}}. This lasts until each is written again, expires or is deleted.</p>{{end}}
{{if .Peers}}<table class="peers"><tr><th>proxy</th><th>revision</th><th>fingerprint</th><th>state</th><th>since</th></tr>
{{range .Peers}}<tr class="peer" data-peer="{{.Name}}" data-state="{{.State}}"><td>{{.Name}}</td><td>{{.Revision}}</td><td><code>{{.Fingerprint}}</code></td><td>{{.State}}</td><td>{{if not .Since.IsZero}}<time datetime="{{time .Since}}">{{time .Since}}</time>{{end}}</td></tr>
{{end}}</table>{{end}}
<table class="nodes"><tr><th>server</th><th>address</th><th>weight</th><th>zone</th><th>health</th><th>share of keys</th><th>requests</th><th>errors</th><th>mean latency</th><th>connections</th><th>last error</th></tr>
{{range .Servers}}<tr class="node" data-node="{{.Name}}"><td>{{.Name}}</td><td>{{.Addr}}</td><td>{{.Weight}}</td><td>{{.Zone}}</td>
<td class="health {{.Health}}" data-health="{{.Health}}">{{.Health}}{{if eq .Health "failing"}}: {{if eq .Failing 1}}its last request failed{{else}}its last {{.Failing}} requests failed{{end}}{{end}}{{if not .FailingSince.IsZero}}, since <time datetime="{{time .FailingSince}}">{{time .FailingSince}}</time>{{end}}</td><td><meter min="0" max="1" value="{{.Share}}"></meter> <span class="share">{{pct .Share}}</span></td>
<td class="requests">{{.Requests}}</td><td class="errors">{{.Errors}}</td><td class="latency">{{if .MeanLatency}}{{dur .MeanLatency}}{{end}}</td><td class="connections">{{.Connections}}</td>
<td class="last-error">{{if .LastError}}{{.LastError}}, <time datetime="{{time .LastErrorAt}}">{{time .LastErrorAt}}</time>{{end}}</td></tr>
{{end}}</table>
</section>
{{end}}
<script>
(function () {
  "use strict";
  var skew = Date.now() - Date.parse(document.body.dataset.now);
  // The age as kolco status writes it; the time stays as the server wrote
  // it, in UTC, as the logs write times.
  function age(ms) {
    var s = Math.max(0, Math.round(ms / 1000));
    if (s < 90) return s + " s ago";
    if (s < 5400) return Math.round(s / 60) + " min ago";
    return (s / 3600).toFixed(1) + " h ago";
  }
  function tick() {
    var times = document.querySelectorAll("time[datetime]");
    for (var i = 0; i < times.length; i++) {
      var iso = times[i].getAttribute("datetime"), t = Date.parse(iso);
      if (isNaN(t) || t <= 0) continue;
      times[i].textContent = iso + " (" + age(Date.now() - skew - t) + ")";
    }
  }
  tick();
  setInterval(tick, 1000);
  var refresh = Number(document.body.dataset.refresh);
  if (refresh > 0) setTimeout(function () { location.reload(); }, refresh * 1000);
})();
</script>
</body></html>
`
