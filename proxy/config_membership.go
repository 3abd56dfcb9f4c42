package proxy

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/dns"
	"github.com/kolco-dev/kolco/membership/etcd"
)

// Membership takes a pool's servers from a membership source instead of
// its servers list, which stays the default until the source's first
// version: etcd for a fleet of proxies, DNS for a Kubernetes headless
// service, or a file several proxies on one box share. Exactly one is set.
// Each version is applied to the pool as a change, as a reload of its
// servers would be; for kolco's distributions the placement is the one
// package membership's Follower keeps for the source, so that every proxy
// following the store reports the same fingerprint. A node becomes the
// server "addr:weight id": the store's ID names it, its address is dialled.
//
// In the file, the durations are in milliseconds, and relative paths are
// taken from the configuration file's directory.
type Membership struct {
	Etcd     *EtcdMembership     `yaml:"etcd"`
	DNS      *DNSMembership      `yaml:"dns"`
	File     *FileMembership     `yaml:"file"`
	Sentinel *SentinelMembership `yaml:"sentinel"`
	// Gossip joins a gossip pool (see config_gossip.go).
	Gossip *GossipMembership `yaml:"gossip"`
}

// SentinelMembership makes a Redis pool's servers Sentinel masters
// (package membership/sentinel): each server's name is a master name the
// Sentinels monitor, which the pool places by, and its address is the
// master's primary as the Sentinels report it, followed through
// failovers. The addresses the servers list serve until the Sentinels
// first answer.
type SentinelMembership struct {
	// Sentinels are the Sentinels' "host:port" addresses. Required.
	Sentinels []string `yaml:"sentinels"`
	// Username and Password authenticate to the Sentinels (AUTH), when
	// Password is set.
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	// Interval (interval) between askings of the Sentinels, besides each
	// failover they announce. Default 1 s.
	Interval time.Duration `yaml:"-"`
	// Timeout (timeout) of one asking. Default 1 s.
	Timeout time.Duration `yaml:"-"`
	// TLS (tls) reaches the Sentinels over TLS, at their tls-port.
	TLS *SentinelTLS `yaml:"tls"`
}

// SentinelTLS is how a pool reaches its Sentinels over TLS: ca_file is
// the authority that signs their certificates (the system's without it),
// cert_file and key_file the proxy's certificate for Sentinels that ask
// for one (tls-auth-clients), server_name the name verified in each
// Sentinel's certificate (default the host of its address, an IP address
// too). The client certificate is read again when its files change, as a
// pool's server_tls; the authority when the source starts (a restart, or
// a reload that changes the pool's membership settings).
type SentinelTLS struct {
	CAFile     string `yaml:"ca_file"`
	CertFile   string `yaml:"cert_file"`
	KeyFile    string `yaml:"key_file"`
	ServerName string `yaml:"server_name"`
}

// EtcdMembership follows nodes under a prefix in etcd, as "kolco members"
// writes them (package membership/etcd).
type EtcdMembership struct {
	// Endpoints are etcd's client URLs. Required.
	Endpoints []string `yaml:"endpoints"`
	// Prefix is the membership's key prefix, such as /kolco/cache/.
	// Required.
	Prefix string `yaml:"prefix"`
	// CAFile, CertFile and KeyFile turn TLS on: the authority that signs
	// etcd's certificate, and a client certificate with its key.
	CAFile   string `yaml:"ca_file"`
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// Username and PasswordFile (whose first line is the password)
	// authenticate to an etcd with auth on.
	Username     string `yaml:"username"`
	PasswordFile string `yaml:"password_file"`
	// Timeout (timeout) bounds each request. Default 5 s.
	Timeout time.Duration `yaml:"-"`
	// CheckInterval (check_interval) is how often the watch asks etcd to
	// confirm that it is current; a view without a confirmation for that
	// long is reported stale. Default 1 s.
	CheckInterval time.Duration `yaml:"-"`
	// WriteState writes the placement state of a history-dependent
	// distribution back to etcd when a change was made without it (a
	// registration's lease expiring); see membership.FollowConfig.
	WriteState bool `yaml:"write_state"`
}

// DNSMembership follows SRV (or A) records (package membership/dns).
type DNSMembership struct {
	// Name is looked up, such as
	// _memcache._tcp.mc.default.svc.cluster.local. Required.
	Name string `yaml:"name"`
	// Records is SRV (default) or A.
	Records string `yaml:"records"`
	// Port is the port of nodes found by A records.
	Port int `yaml:"port"`
	// StableAddresses declares that addresses keep naming the same
	// servers across restarts; needed for A records.
	StableAddresses bool `yaml:"stable_addresses"`
	// UseWeights takes SRV weights as node weights.
	UseWeights bool `yaml:"use_weights"`
	// Resolver is the "host:port" of the DNS server to ask; empty means
	// the system's resolver.
	Resolver string `yaml:"resolver"`
	// Interval (interval) between lookups. Default 5 s.
	Interval time.Duration `yaml:"-"`
	// Timeout (timeout) of one lookup. Default 2 s.
	Timeout time.Duration `yaml:"-"`
}

// FileMembership follows a file (membership.File): by default one pool's
// servers in a nutcracker.yml.
type FileMembership struct {
	// Path is the file. Required.
	Path string `yaml:"path"`
	// Format is "nutcracker" (default: server lines, which carry
	// addresses) or "nodes" (kolco's node list, whose nodes have none and
	// so cannot be served).
	Format string `yaml:"format"`
	// Pool is the nutcracker.yml pool to read; empty means its only pool.
	Pool string `yaml:"pool"`
	// Interval (interval) between reads. Default 1 s.
	Interval time.Duration `yaml:"-"`
	// Settle (settle) is how long a changed file must stay the same
	// before it is taken. Default 500 ms.
	Settle time.Duration `yaml:"-"`
}

// membershipFile is Membership as the file writes it, durations in
// milliseconds.
type membershipFile struct {
	Etcd *struct {
		EtcdMembership `yaml:",inline"`
		Timeout        int `yaml:"timeout"`
		CheckInterval  int `yaml:"check_interval"`
	} `yaml:"etcd"`
	DNS *struct {
		DNSMembership `yaml:",inline"`
		Interval      int `yaml:"interval"`
		Timeout       int `yaml:"timeout"`
	} `yaml:"dns"`
	File *struct {
		FileMembership `yaml:",inline"`
		Interval       int `yaml:"interval"`
		Settle         int `yaml:"settle"`
	} `yaml:"file"`
	Sentinel *struct {
		SentinelMembership `yaml:",inline"`
		Interval           int `yaml:"interval"`
		Timeout            int `yaml:"timeout"`
	} `yaml:"sentinel"`
	Gossip *gossipFile `yaml:"gossip"`
}

// UnmarshalYAML decodes the membership key, refusing unknown keys, with
// its durations in milliseconds.
func (m *Membership) UnmarshalYAML(node *yaml.Node) error {
	var f membershipFile
	if err := decodeStrict(node, &f); err != nil {
		return err
	}
	*m = Membership{}
	var err error
	set := func(dst *time.Duration, ms int) {
		if err == nil {
			*dst, err = millis(ms)
		}
	}
	if e := f.Etcd; e != nil {
		m.Etcd = &e.EtcdMembership
		set(&m.Etcd.Timeout, e.Timeout)
		set(&m.Etcd.CheckInterval, e.CheckInterval)
	}
	if d := f.DNS; d != nil {
		m.DNS = &d.DNSMembership
		set(&m.DNS.Interval, d.Interval)
		set(&m.DNS.Timeout, d.Timeout)
	}
	if fl := f.File; fl != nil {
		m.File = &fl.FileMembership
		set(&m.File.Interval, fl.Interval)
		set(&m.File.Settle, fl.Settle)
	}
	if sn := f.Sentinel; sn != nil {
		m.Sentinel = &sn.SentinelMembership
		set(&m.Sentinel.Interval, sn.Interval)
		set(&m.Sentinel.Timeout, sn.Timeout)
	}
	if f.Gossip != nil && err == nil {
		m.Gossip, err = f.Gossip.decode()
	}
	return err
}

// String describes the source: "etcd PREFIX at ENDPOINTS", "dns NAME",
// "file PATH".
func (m *Membership) String() string {
	switch {
	case m == nil:
		return "configuration"
	case m.Etcd != nil:
		return fmt.Sprintf("etcd %s at %s", m.Etcd.Prefix, strings.Join(m.Etcd.Endpoints, ","))
	case m.DNS != nil:
		return fmt.Sprintf("dns %s %s", cmp.Or(m.DNS.Records, dns.SRV), m.DNS.Name)
	case m.File != nil:
		return "file " + m.File.Path
	case m.Sentinel != nil:
		return "sentinel at " + strings.Join(m.Sentinel.Sentinels, ",")
	case m.Gossip != nil:
		return m.Gossip.String()
	}
	return "none"
}

// checkMembership checks the membership key, and that the pool sets no
// zones: a source's nodes carry their own.
func (p *PoolConfig) checkMembership(bad badSetting) error {
	m := p.Membership
	if m == nil {
		return nil
	}
	n := 0
	for _, set := range []bool{m.Etcd != nil, m.DNS != nil, m.File != nil, m.Sentinel != nil, m.Gossip != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return bad("membership", "give one source: etcd, dns, file, sentinel or gossip (got %d)", n)
	}
	if len(p.Zones) > 0 || p.Zone != "" {
		return bad("zones", "a pool on a membership source takes its servers, and their zones, from the source")
	}
	var err error
	switch {
	case m.Etcd != nil:
		err = m.Etcd.check()
	case (m.DNS != nil || m.File != nil) && historyDependent(p.Distribution):
		// A poll may skip a version, and a proxy started later (a
		// restart, a handover's new process, another proxy) has seen
		// none: each would place by its own history, and a cache's
		// proxies read and write a key on different servers - stale
		// reads, not only misses.
		err = fmt.Errorf("%s: distribution %s is history-dependent: its placement depends on the order of changes, and a %[1]s source gives each proxy "+
			"only the versions it happened to read, so proxies started at other times, or polling at other moments, place keys apart; "+
			"list the servers in the configuration (a reload keeps the history in kolco.state_file), follow etcd (which keeps it for the fleet), or use ring, rendezvous, maglev or ketama",
			strings.Fields(m.String())[0], p.Distribution)
	case m.DNS != nil:
		err = m.DNS.check()
	case m.Sentinel != nil:
		err = p.checkSentinel()
	case m.Gossip != nil:
		err = m.Gossip.check(p.Distribution)
	default:
		err = m.File.check()
	}
	if err != nil {
		return bad("membership", "%w", err)
	}
	return nil
}

func (e *EtcdMembership) check() error {
	switch {
	case len(e.Endpoints) == 0:
		return errors.New("etcd: no endpoints")
	case e.Prefix == "":
		return errors.New("etcd: no prefix: the membership must be under a prefix of its own, such as /kolco/cache/")
	case etcd.CheckPrefix(e.Prefix) != nil:
		// The check "kolco members" makes: kolco/cache and /kolco/cache
		// are two memberships to etcd.
		return etcd.CheckPrefix(e.Prefix)
	case (e.CertFile == "") != (e.KeyFile == ""):
		return errors.New("etcd: a client certificate needs both cert_file and key_file")
	case (e.Username == "") != (e.PasswordFile == ""):
		return errors.New("etcd: auth needs both username and password_file")
	case e.Timeout < 0 || e.CheckInterval < 0:
		return errors.New("etcd: timeout and check_interval must not be negative")
	}
	for _, ep := range e.Endpoints {
		if ep == "" || strings.ContainsAny(ep, " \t\n") {
			return fmt.Errorf("etcd: endpoint %q", ep)
		}
	}
	return nil
}

func (d *DNSMembership) check() error {
	switch {
	case d.Name == "":
		return errors.New("dns: no name to look up")
	case d.Records != "" && d.Records != dns.SRV && d.Records != dns.A:
		return fmt.Errorf("dns: records %q: want %s or %s", d.Records, dns.SRV, dns.A)
	case d.Records == dns.A && !d.StableAddresses:
		return errors.New("dns: A records name nodes by address; set stable_addresses, or use SRV records, whose targets are names")
	case d.Records == dns.A && (d.Port < 1 || d.Port > 65535):
		return fmt.Errorf("dns: A records need a port 1..65535 (got %d)", d.Port)
	case d.Records != dns.A && d.Port != 0:
		return errors.New("dns: a port is given, but SRV records carry their own")
	case d.Interval < 0 || d.Timeout < 0:
		return errors.New("dns: interval and timeout must not be negative")
	}
	if d.Resolver != "" {
		if _, _, err := net.SplitHostPort(d.Resolver); err != nil {
			return fmt.Errorf("dns: resolver: %w", err)
		}
	}
	return nil
}

// checkSentinel checks a Sentinel source and the pool it serves: a Redis
// pool whose servers are named by their master names.
func (p *PoolConfig) checkSentinel() error {
	sn := p.Membership.Sentinel
	switch {
	case !p.Redis:
		return errors.New("sentinel: Sentinel watches Redis primaries: set redis: true")
	case len(sn.Sentinels) == 0:
		return errors.New("sentinel: no sentinels to ask")
	case sn.Username != "" && sn.Password == "":
		return errors.New("sentinel: a username needs a password")
	case sn.Interval < 0 || sn.Timeout < 0:
		return errors.New("sentinel: interval and timeout must not be negative")
	}
	for _, a := range sn.Sentinels {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("sentinel: sentinel %q: want host:port", a)
		}
	}
	if t := sn.TLS; t != nil {
		switch {
		case (t.CertFile == "") != (t.KeyFile == ""):
			return errors.New("sentinel: tls: a client certificate needs both cert_file and key_file")
		case strings.ContainsAny(t.ServerName, " \t"):
			return fmt.Errorf("sentinel: tls: server_name %q is not a name to verify", t.ServerName)
		}
	}
	for _, s := range p.Servers {
		if s.Name == "" {
			return fmt.Errorf("sentinel: server %s has no name: name each server by its Sentinel master name (\"%s:%d NAME\")", s.String(), s.Addr(), s.Weight)
		}
		if strings.ContainsAny(s.Name, " \t") {
			return fmt.Errorf("sentinel: master name %q has a space", s.Name)
		}
	}
	return nil
}

func (f *FileMembership) check() error {
	switch {
	case f.Path == "":
		return errors.New("file: no path")
	case f.Format != "" && f.Format != membership.FormatNutcracker && f.Format != membership.FormatNodes:
		return fmt.Errorf("file: format %q: want %s or %s", f.Format, membership.FormatNutcracker, membership.FormatNodes)
	case f.Format == membership.FormatNodes && f.Pool != "":
		return errors.New("file: a pool is named, but a node list has no pools")
	case f.Interval < 0 || f.Settle < 0:
		return errors.New("file: interval and settle must not be negative")
	}
	return nil
}

// explainMembership says where the pool's servers come from, for
// --check.
func explainMembership(b *strings.Builder, p *PoolConfig) {
	if p.Membership == nil {
		return
	}
	if p.Membership.Sentinel != nil {
		fmt.Fprintf(b, "  membership: each server is the Sentinel master of its name, at its primary's address as %s reports it, followed through failovers (asked every %d ms, and at each +switch-master); a failover moves no key; the addresses below serve until the Sentinels answer\n",
			p.Membership, cmp.Or(p.Membership.Sentinel.Interval, time.Second).Milliseconds())
		if t := p.Membership.Sentinel.TLS; t != nil {
			cert := ""
			if t.CertFile != "" {
				cert = ", presenting " + t.CertFile
			}
			fmt.Fprintf(b, "  membership: the Sentinels are reached over TLS, verified against %s%s\n",
				cmp.Or(t.CAFile, "the system's authorities"), cert)
		}
		return
	}
	fmt.Fprintf(b, "  membership: servers from %s, each version applied as a change; the servers below serve until its first version\n",
		p.Membership)
	if g := p.Membership.Gossip; g != nil {
		g.explain(b)
	}
}

// explainPeers names the peers the status page compares with, for
// --check.
func explainPeers(b *strings.Builder, peers []string) {
	if len(peers) > 0 {
		fmt.Fprintf(b, "admin: the status page (/status) compares fingerprints with %d peers: %s\n", len(peers), strings.Join(peers, ", "))
	}
}
