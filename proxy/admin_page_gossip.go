package proxy

import "html/template"

// The status page's section on a pool's gossip pool, a template of its
// own that the page calls for a pool on gossip: who is in the pool, which
// members do not answer this proxy's probes, and how the failure detector
// has fared - what tells a fleet whose live members are found dead and
// back (a busy machine, probes too tight) from one whose members die.
var _ = template.Must(pageTemplate.New("gossip").Parse(gossipPageHTML))

const gossipPageHTML = `<div class="gossip" data-alone="{{.Alone}}" data-health="{{.Health}}">
<p>Gossip: this proxy is <code class="gossip-member">{{.Member}}</code>{{if .Addr}} at {{.Addr}}{{end}}{{if .Alone}}, <span class="down">not in the pool: {{.JoinError}}</span>{{end}};
health <span class="gossip-health">{{.Health}}</span>{{if gt .Health 0}} <span class="down">(it misses its own probes' answers, so it probes more slowly and its suspicions are doubtful: a busy machine)</span>{{else}} (its probes are answered in time){{end}}.
The revision is this proxy's own count of the node sets it has seen: proxies in step may differ in it, never in the fingerprint.</p>
<p>{{len .Nodes}} nodes, {{len .Observers}} observers.{{if .Suspects}} <span class="down gossip-suspects">Not answering this proxy's probes: {{range $i, $s := .Suspects}}{{if $i}}, {{end}}{{$s}}{{end}}.</span>{{end}}
This proxy suspected a member {{.Suspected}} times and answered suspicions of itself {{.Refuted}} times; it saw {{.Deaths}} members found dead or leave{{with .LastDeath}} (the last at <time datetime="{{time .}}">{{time .}}</time>){{end}} and {{.Returns}} come back.</p>
<table class="gossip-members"><tr><th>member</th><th>role</th><th>gossip address</th><th>state</th></tr>
{{range .Nodes}}<tr class="gossip-member" data-member="{{.Name}}" data-role="node" data-suspect="{{.Suspect}}"><td>{{.Name}}</td><td>node</td><td>{{.Addr}}</td><td{{if .Suspect}} class="down"{{end}}>{{if .Suspect}}not answering{{else if .Drained}}drained{{else}}alive{{end}}</td></tr>
{{end}}{{range .Observers}}<tr class="gossip-member" data-member="{{.Name}}" data-role="observer" data-suspect="{{.Suspect}}"><td>{{.Name}}</td><td>observer</td><td>{{.Addr}}</td><td{{if .Suspect}} class="down"{{end}}>{{if .Suspect}}not answering{{else}}alive{{end}}</td></tr>
{{end}}</table>
</div>
`
