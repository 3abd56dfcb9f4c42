package proxy

import (
	"fmt"
	"net"
	"strings"

	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// ClientTLS (tls) makes a pool's listener speak TLS to its clients. The
// files are read at start and read again on SIGHUP and when they change;
// a new certificate that does not load is refused, logged, and the one in
// use kept.
type ClientTLS struct {
	// CertFile and KeyFile are the listener's certificate (with its
	// chain) and key, PEM. Required.
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// ClientCAFile, when set, asks every client for a certificate signed
	// by one of its authorities (mutual TLS), and refuses a client
	// without one.
	ClientCAFile string `yaml:"client_ca_file"`
	// Listen, when set, is a second address of the pool's, that speaks
	// TLS, while listen stays plaintext: both during a migration of the
	// clients to TLS. Empty: listen itself speaks TLS. (Not for
	// admin_tls.)
	Listen string `yaml:"listen"`
}

// ServerTLS (server_tls) makes the proxy reach a pool's servers over
// TLS: every connection it opens to them (requests, health probes, a
// store's moves, replica reads' measures) verifies the server's
// certificate against CAFile, or the system's authorities when it is
// empty. Files are read again as ClientTLS's are.
type ServerTLS struct {
	CAFile string `yaml:"ca_file"`
	// CertFile and KeyFile are the proxy's client certificate, for
	// servers that ask for one; both or neither.
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// ServerName is the name verified in every server's certificate;
	// empty means the host of its address. ServerNames sets it per
	// server, by name or address.
	ServerName  string            `yaml:"server_name"`
	ServerNames map[string]string `yaml:"server_names"`
}

// check checks tls, the setting of a pool that listens on listen: files
// named in pairs, a TCP address to speak TLS on. A nil t checks nothing.
func (t *ClientTLS) check(listen string, bad badSetting) error {
	if t == nil {
		return nil
	}
	if t.CertFile == "" || t.KeyFile == "" {
		return bad("tls", "a TLS listener needs cert_file and key_file")
	}
	if spec, err := parseListen(listen); err == nil && spec.network == "unix" && t.Listen == "" {
		return bad("tls", "listen is a unix socket: TLS is for TCP listeners (tls.listen gives a TCP address of its own)")
	}
	if t.Listen != "" {
		if spec, err := parseListen(t.Listen); err != nil || spec.network == "unix" {
			return bad("tls.listen", "%q: want a TCP host:port", t.Listen)
		}
		if t.Listen == listen {
			return bad("tls.listen", "the same address as listen: give another, or leave it out to make listen speak TLS")
		}
	}
	return nil
}

// check checks server_tls, the setting of a pool of servers: files named
// in pairs, servers reached over TCP. A nil t checks nothing.
func (t *ServerTLS) check(servers []twemproxy.Server, bad badSetting) error {
	if t == nil {
		return nil
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return bad("server_tls", "a client certificate needs both cert_file and key_file")
	}
	for _, s := range servers {
		if s.Port == 0 {
			return bad("server_tls", "server %s is a unix socket: TLS is for servers reached over TCP", s.String())
		}
	}
	for k, v := range t.ServerNames {
		if v == "" || strings.ContainsAny(v, " \t") {
			return bad("server_tls.server_names", "%q: %q is not a name to verify", k, v)
		}
	}
	return nil
}

// serverName returns the name the proxy verifies in the certificate of
// the server named name at addr.
func (t *ServerTLS) serverName(name, addr string) string {
	if n, ok := t.ServerNames[name]; ok {
		return n
	}
	if n, ok := t.ServerNames[addr]; ok {
		return n
	}
	if t.ServerName != "" {
		return t.ServerName
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return host
}

// explainTLS says how the pool's clients and servers are reached, for
// --check.
func explainTLS(b *strings.Builder, p *PoolConfig) {
	if t := p.TLS; t != nil {
		auth := "clients need no certificate"
		if t.ClientCAFile != "" {
			auth = "clients must present a certificate signed by " + t.ClientCAFile
		}
		where := "listen speaks TLS only"
		if t.Listen != "" {
			where = "on " + t.Listen + ", beside plaintext on " + p.Listen
		}
		fmt.Fprintf(b, "  tls: clients over TLS 1.2 or later, %s (certificate %s); %s; the files are read again on SIGHUP and when they change\n", where, t.CertFile, auth)
	}
	if t := p.ServerTLS; t != nil {
		ca := "the system's authorities"
		if t.CAFile != "" {
			ca = t.CAFile
		}
		cert := "no client certificate"
		if t.CertFile != "" {
			cert = "client certificate " + t.CertFile
		}
		fmt.Fprintf(b, "  server_tls: servers over TLS 1.2 or later, verified against %s, %s\n", ca, cert)
	}
}
