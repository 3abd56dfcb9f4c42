package proxy

import (
	"fmt"
	"log/slog"
	"reflect"
	"strings"

	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// logChanges logs what a reload changed, a line per pool added, removed
// or changed: for a changed pool, its servers added, removed, re-weighted
// and repointed at another address (by name), and the other settings that
// changed, by their keys in the file. Both configurations have their
// defaults set.
func logChanges(log *slog.Logger, old, cur *Config) {
	for _, name := range cur.PoolNames() {
		p := cur.Pools[name]
		o, ok := old.Pools[name]
		if !ok {
			log.Info("reload: pool added", "pool", name, "listen", p.Listen, "servers", len(p.Servers))
			continue
		}
		if attrs := poolChanges(o, p); len(attrs) > 0 {
			log.Info("reload: pool changed", append([]any{"pool", name}, attrs...)...)
		}
	}
	for _, name := range old.PoolNames() {
		if _, ok := cur.Pools[name]; !ok {
			log.Info("reload: pool removed", "pool", name, "listen", old.Pools[name].Listen)
		}
	}
}

// poolChanges returns, as slog attributes, what changed from o to p; none
// when nothing did.
func poolChanges(o, p *PoolConfig) []any {
	was, now := serversByName(o), serversByName(p)
	var added, removed, reweighted, repointed []string
	for _, s := range p.Servers {
		old, ok := was[s.RingName()]
		switch {
		case !ok:
			added = append(added, s.String())
		case old.Addr() != s.Addr():
			repointed = append(repointed, fmt.Sprintf("%s: %s -> %s", s.RingName(), old.Addr(), s.Addr()))
		case old.Weight != s.Weight:
			reweighted = append(reweighted, fmt.Sprintf("%s: %d -> %d", s.RingName(), old.Weight, s.Weight))
		}
	}
	for _, s := range o.Servers {
		if _, ok := now[s.RingName()]; !ok {
			removed = append(removed, s.String())
		}
	}
	var attrs []any
	for _, a := range []struct {
		key  string
		list []string
	}{
		{"servers_added", added}, {"servers_removed", removed}, {"reweighted", reweighted},
		{"repointed", repointed}, {"settings", settingChanges(o, p)},
	} {
		if len(a.list) > 0 {
			attrs = append(attrs, slog.String(a.key, strings.Join(a.list, ", ")))
		}
	}
	return attrs
}

func serversByName(p *PoolConfig) map[string]twemproxy.Server {
	m := make(map[string]twemproxy.Server, len(p.Servers))
	for _, s := range p.Servers {
		m[s.RingName()] = s
	}
	return m
}

// settingChanges returns the keys, as the file writes them, of the
// settings other than servers that differ between o and p.
func settingChanges(o, p *PoolConfig) []string {
	var keys []string
	ov, pv := reflect.ValueOf(*o), reflect.ValueOf(*p)
	t := ov.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "-" {
			key = fileKeys[f.Name]
		}
		if key == "servers" || key == "" {
			continue
		}
		if !reflect.DeepEqual(ov.Field(i).Interface(), pv.Field(i).Interface()) {
			keys = append(keys, key)
		}
	}
	return keys
}

// fileKeys are the keys in the file of the settings whose type differs
// there (durations in milliseconds).
var fileKeys = map[string]string{
	"Timeout": "timeout", "ServerRetryTimeout": "server_retry_timeout",
	"ClientIdleTimeout": "client_idle_timeout", "HealthCheck": "health_check", "Servers": "servers",
}
