package proxy

import (
	"cmp"
	"context"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/twemproxy"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/dns"
	"github.com/kolco-dev/kolco/membership/etcd"
	"github.com/kolco-dev/kolco/membership/sentinel"
)

// sourceEnv is what a membership source is given besides its settings:
// the TLS configuration of a Sentinel source's connections, and, when a
// gossip member joins once its address is free (see joiningGossip), how
// to tell that it is not.
type sourceEnv struct {
	sentinelTLS *tls.Config
	gossipInUse func(addr string) bool
	// placeholder: the initial nodes are the pool's configured servers,
	// which no source named (see sourceView.placeholder).
	placeholder bool
}

// source returns the membership source m describes, with relative paths
// taken from dir, and what closes it. The error is a [*ConfigError] for
// the pool's membership key: a password file that cannot be read, TLS
// files that do not load.
func (m *Membership) source(pool, dir string, servers []twemproxy.Server, env sourceEnv) (membership.Source, func() error, error) {
	bad := func(err error) error { return &ConfigError{Pool: pool, Key: "membership", Err: err} }
	nop := func() error { return nil }
	switch {
	case m.Etcd != nil:
		e := m.Etcd
		cfg := etcd.Config{Endpoints: e.Endpoints, Prefix: e.Prefix, CAFile: inDir(dir, e.CAFile),
			CertFile: inDir(dir, e.CertFile), KeyFile: inDir(dir, e.KeyFile), Username: e.Username,
			Timeout: e.Timeout, CheckInterval: e.CheckInterval}
		if e.PasswordFile != "" {
			data, err := os.ReadFile(inDir(dir, e.PasswordFile))
			if err != nil {
				return nil, nil, bad(err)
			}
			line, _, _ := strings.Cut(string(data), "\n")
			cfg.Password = strings.TrimRight(line, "\r")
		}
		st, err := etcd.New(cfg)
		if err != nil {
			return nil, nil, bad(err)
		}
		return st, st.Close, nil
	case m.DNS != nil:
		d := m.DNS
		src := &dns.Source{Name: d.Name, Records: d.Records, Port: d.Port, StableAddresses: d.StableAddresses,
			UseWeights: d.UseWeights, Interval: d.Interval, Timeout: d.Timeout}
		if d.Resolver != "" {
			src.Resolver = resolverAt(d.Resolver)
		}
		return src, nop, nil
	case m.Sentinel != nil:
		sn := m.Sentinel
		src := &sentinel.Source{Sentinels: sn.Sentinels, Username: sn.Username, Password: sn.Password,
			Interval: sn.Interval, Timeout: sn.Timeout, TLS: env.sentinelTLS}
		for _, s := range servers {
			src.Masters = append(src.Masters, kolco.Node{ID: s.Name, Weight: float64(s.Weight)})
		}
		return src, nop, nil
	case m.Gossip != nil:
		return m.Gossip.source(pool, dir, env.gossipInUse)
	default:
		f := m.File
		return &membership.File{Path: inDir(dir, f.Path), Format: cmp.Or(f.Format, membership.FormatNutcracker),
			Pool: f.Pool, Interval: f.Interval, Settle: f.Settle}, nop, nil
	}
}

// inDir returns path taken from dir when it is relative.
func inDir(dir, path string) string {
	if path == "" || filepath.IsAbs(path) || dir == "" {
		return path
	}
	return filepath.Join(dir, path)
}

// resolverAt returns a resolver that asks the DNS server at addr alone.
func resolverAt(addr string) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
}
