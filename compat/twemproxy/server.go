package twemproxy

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// ErrBadServer is returned by [ParseServer] for a line nutcracker would
// reject, or one it would accept but mishandle (an empty host or name).
var ErrBadServer = errors.New("twemproxy: bad server line")

// defaultPort is the memcached port whose servers are hashed by host alone,
// for backward compatibility with libmemcached.
const defaultPort = 11211

// Server is one server of a pool, as a "host:port:weight [name]" line
// describes it. A unix socket server ("/path:weight [name]") has Port 0.
type Server struct {
	// Host is the host name or address exactly as written; it is never
	// resolved ("localhost" and "127.0.0.1" hash differently).
	Host string
	// Port is the TCP port, 1..65535, or 0 for a unix socket.
	Port int
	// Weight is the server's relative share; zero means 1.
	Weight int
	// Name, when not empty, is the name hashed instead of the address.
	Name string
}

// RingName returns the string the server is hashed under: Name when set,
// else Host when Port is 11211, else "Host:Port". A unix socket without a
// name hashes as "path:" (nutcracker keeps the separator before the weight).
func (s Server) RingName() string {
	switch {
	case s.Name != "":
		return s.Name
	case s.Port == defaultPort:
		return s.Host
	case s.Port == 0 && strings.HasPrefix(s.Host, "/"):
		return s.Host + ":"
	default:
		return s.Host + ":" + strconv.Itoa(s.Port)
	}
}

// Addr returns the address to connect to: "host:port" (bracketed for an
// IPv6 literal) or the socket path.
func (s Server) Addr() string {
	if s.Port == 0 && strings.HasPrefix(s.Host, "/") {
		return s.Host
	}
	return net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
}

// String returns the server as a nutcracker.yml line.
func (s Server) String() string {
	w := s.Weight
	if w == 0 {
		w = 1
	}
	var b strings.Builder
	b.WriteString(s.Host)
	if !(s.Port == 0 && strings.HasPrefix(s.Host, "/")) {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(s.Port))
	}
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(w))
	if s.Name != "" {
		b.WriteByte(' ')
		b.WriteString(s.Name)
	}
	return b.String()
}

// ParseServer parses one entry of a pool's "servers:" list,
// "host:port:weight [name]" or "/path/to/socket:weight [name]", the way
// nutcracker 0.5.0 does: the name is what follows the last space, then the
// weight and the port are taken from the right at the last colons, so an
// IPv6 host needs no brackets ("::1:11211:1"). The weight must be a positive
// decimal, the port 1..65535.
//
// A port written with leading zeros is hashed by nutcracker as written
// ("h:011212"); ParseServer then sets Name to that text so that RingName
// agrees. The error wraps [ErrBadServer].
func ParseServer(line string) (Server, error) {
	bad := func(why string) (Server, error) {
		return Server{}, fmt.Errorf("%w %q: %s", ErrBadServer, line, why)
	}
	if strings.IndexByte(line, 0) >= 0 {
		return bad("NUL byte")
	}
	unix := strings.HasPrefix(line, "/")
	rest, name, named := line, "", false
	if i := strings.LastIndexByte(rest, ' '); i >= 0 {
		rest, name, named = rest[:i], rest[i+1:], true
		if name == "" {
			return bad("empty name")
		}
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return bad(`want "host:port:weight [name]" or "/path:weight [name]"`)
	}
	rest, weightText := rest[:i], rest[i+1:]
	var portText string
	if i = strings.LastIndexByte(rest, ':'); unix != (i < 0) {
		return bad(`want "host:port:weight [name]" or "/path:weight [name]"`)
	} else if i >= 0 {
		rest, portText = rest[:i], rest[i+1:]
	}
	if rest == "" {
		return bad("empty host")
	}
	weight, ok := atoi(weightText)
	if !ok || weight == 0 {
		return bad("weight must be a positive integer")
	}
	s := Server{Host: rest, Weight: weight}
	if !unix {
		port, ok := atoi(portText)
		if !ok || port < 1 || port > 65535 {
			return bad("port must be 1..65535")
		}
		s.Port = port
	}
	switch {
	case named:
		s.Name = name
	case !unix && portText != strconv.Itoa(s.Port) && s.Port != defaultPort:
		s.Name = rest + ":" + portText
	}
	return s, nil
}

// atoi parses a non-empty run of decimal digits up to MaxInt32, as
// nutcracker's nc_atoi does (no sign, no spaces).
func atoi(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		if n = n*10 + int(s[i]-'0'); n > 1<<31-1 {
			return 0, false
		}
	}
	return n, true
}
