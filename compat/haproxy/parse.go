package haproxy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kolco-dev/kolco"
)

// MaxWeight is HAProxy's largest server weight.
const MaxWeight = 256

// Server is one `server` line of a backend.
type Server struct {
	// Name is the server's name, unique in the backend.
	Name string
	// Addr is the address as written, "127.0.0.1:8080".
	Addr string
	// Weight is the weight, 0 to 256. Unlike elsewhere in kolco, 0 is
	// HAProxy's weight 0: the server receives no keys. [ParseBackend] sets
	// HAProxy's default, 1, when the line has no weight.
	Weight int
	// ID is the `id` setting, 0 when absent (then numbered automatically).
	ID int
	// Backup marks a backup server; it receives no keys here.
	Backup bool
}

// Backend is what [ParseBackend] reads.
type Backend struct {
	// Name is the backend (or listen) section's name, if given.
	Name string
	// Hash is the hash-type setting, HAProxy's default when absent.
	Hash HashType
	// Servers are the server lines in declaration order.
	Servers []Server
}

// serverArgs gives the number of arguments of the server keywords HAProxy 2.6
// knows that do not affect hash placement; they are skipped.
var serverArgs = map[string]int{
	"check": 0, "no-check": 0, "check-ssl": 0, "no-check-ssl": 0, "ssl": 0, "no-ssl": 0,
	"send-proxy": 0, "no-send-proxy": 0, "send-proxy-v2": 0, "send-proxy-v2-ssl": 0,
	"send-proxy-v2-ssl-cn": 0, "check-send-proxy": 0, "no-check-send-proxy": 0,
	"agent-check": 0, "no-agent-check": 0, "tfo": 0, "no-tfo": 0, "stick": 0, "non-stick": 0,
	"enabled": 0, "no-backup": 0, "ssl-reuse": 0, "no-ssl-reuse": 0, "tls-tickets": 0,
	"no-tls-tickets": 0, "allow-0rtt": 0, "no-verifyhost": 0,
	"inter": 1, "fastinter": 1, "downinter": 1, "rise": 1, "fall": 1, "port": 1, "addr": 1,
	"maxconn": 1, "minconn": 1, "maxqueue": 1, "cookie": 1, "slowstart": 1, "observe": 1,
	"on-error": 1, "on-marked-down": 1, "on-marked-up": 1, "error-limit": 1, "init-addr": 1,
	"resolvers": 1, "resolve-prefer": 1, "resolve-net": 1, "resolve-opts": 1, "track": 1,
	"redir": 1, "proto": 1, "ws": 1, "shard": 1, "log-proto": 1, "max-reuse": 1, "namespace": 1,
	"pool-low-conn": 1, "pool-max-conn": 1, "pool-purge-delay": 1, "sni": 1, "check-sni": 1,
	"verify": 1, "verifyhost": 1, "ca-file": 1, "crt": 1, "crl-file": 1, "alpn": 1, "npn": 1,
	"check-alpn": 1, "check-proto": 1, "ciphers": 1, "ciphersuites": 1, "ssl-min-ver": 1,
	"ssl-max-ver": 1, "agent-addr": 1, "agent-port": 1, "agent-inter": 1, "agent-send": 1,
	"source": 1, "usesrc": 1,
}

// ParseBackend reads a `backend` or `listen` section, or just its lines: the
// `hash-type` line, `default-server` weights and the `server` lines (name,
// address, `weight N`, `id N`, `backup`; other keywords are skipped with
// their arguments). `disabled` servers are rejected because their later
// state is not known here, and so are `server-template` lines, and a
// non-zero `hash-balance-factor`, whose bounded loads depend on live
// connection counts. For a whole haproxy.cfg, with defaults sections and
// several backends, use [ParseConfig]. The error wraps [kolco.ErrBadConfig]
// for a line it cannot read, [kolco.ErrBadWeight] for a weight outside
// 0..256 and [kolco.ErrNoNodes] when there is no server line.
func ParseBackend(text string) (Backend, error) {
	r := newBackendReader()
	for _, line := range strings.Split(text, "\n") {
		if err := r.read(line); err != nil {
			return Backend{}, err
		}
	}
	return r.backend()
}

// backendReader reads, line by line, what bears on placement in a backend
// and in the defaults it inherits.
type backendReader struct {
	b         Backend
	defWeight int // the default-server weight
}

func newBackendReader() *backendReader { return &backendReader{defWeight: 1} }

// read reads one line. The error names the line.
func (r *backendReader) read(line string) error {
	f := fields(line)
	if len(f) == 0 {
		return nil
	}
	var err error
	switch f[0] {
	case "backend", "listen":
		if len(f) >= 2 {
			r.b.Name = f[1]
		}
	case "hash-type":
		r.b.Hash, err = ParseHashType(strings.Join(f, " "))
	case "hash-balance-factor":
		if len(f) != 2 || f[1] != "0" {
			err = fmt.Errorf("%w: bounded loads depend on live connection counts and are not modelled", kolco.ErrBadConfig)
		}
	case "default-server":
		var s Server
		if s, err = parseServerArgs(Server{Weight: r.defWeight}, f[1:]); err == nil {
			r.defWeight = s.Weight
		}
	case "server-template":
		err = fmt.Errorf("%w: servers made from a template are not modelled", kolco.ErrBadConfig)
	case "server":
		if len(f) < 3 {
			err = fmt.Errorf("%w: server line needs a name and an address", kolco.ErrBadConfig)
			break
		}
		var s Server
		if s, err = parseServerArgs(Server{Name: f[1], Addr: f[2], Weight: r.defWeight}, f[3:]); err == nil {
			r.b.Servers = append(r.b.Servers, s)
		}
	}
	if err != nil {
		return fmt.Errorf("haproxy: %q: %w", strings.Join(f, " "), err)
	}
	return nil
}

// backend returns the backend read. The error wraps [kolco.ErrNoNodes]
// when there was no server line.
func (r *backendReader) backend() (Backend, error) {
	if len(r.b.Servers) == 0 {
		return Backend{}, fmt.Errorf("%w: haproxy: no server lines", kolco.ErrNoNodes)
	}
	return r.b, nil
}

// fields returns the words of a configuration line without its comment.
func fields(line string) []string {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	return strings.Fields(line)
}

func parseServerArgs(s Server, f []string) (Server, error) {
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case "weight", "id":
			if i+1 == len(f) {
				return s, fmt.Errorf("%w: %s needs a value", kolco.ErrBadConfig, f[i])
			}
			v, err := strconv.Atoi(f[i+1])
			if f[i] == "weight" {
				if err != nil || v < 0 || v > MaxWeight {
					return s, fmt.Errorf("%w: weight %q (0..%d)", kolco.ErrBadWeight, f[i+1], MaxWeight)
				}
				s.Weight = v
			} else {
				if err != nil || v < 1 {
					return s, fmt.Errorf("%w: id %q must be a positive integer", kolco.ErrBadConfig, f[i+1])
				}
				s.ID = v
			}
			i++
		case "backup":
			s.Backup = true
		case "disabled":
			return s, fmt.Errorf("%w: disabled servers are not supported", kolco.ErrBadConfig)
		default:
			n, ok := serverArgs[f[i]]
			if !ok {
				return s, fmt.Errorf("%w: unknown server keyword %q", kolco.ErrBadConfig, f[i])
			}
			i += n
		}
	}
	return s, nil
}
