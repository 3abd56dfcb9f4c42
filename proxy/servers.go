package proxy

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// serverSpec is one "host:port:weight [name]" line of a pool.
type serverSpec struct {
	host   string
	port   int
	weight int
	name   string
}

// parseServer parses a server line as nutcracker does: the name follows the
// last space, weight and port are taken from the right.
func parseServer(line string) (serverSpec, error) {
	rest, name := line, ""
	if i := strings.LastIndexByte(rest, ' '); i >= 0 {
		rest, name = rest[:i], rest[i+1:]
		if name == "" {
			return serverSpec{}, fmt.Errorf("%q: empty name", line)
		}
	}
	i := strings.LastIndexByte(rest, ':')
	j := strings.LastIndexByte(rest[:max(i, 0)], ':')
	if i < 0 || j <= 0 {
		return serverSpec{}, fmt.Errorf("%q: want host:port:weight [name]", line)
	}
	port, err1 := strconv.Atoi(rest[j+1 : i])
	weight, err2 := strconv.Atoi(rest[i+1:])
	if err1 != nil || port < 1 || port > 65535 {
		return serverSpec{}, fmt.Errorf("%q: port must be 1..65535", line)
	}
	if err2 != nil || weight < 1 {
		return serverSpec{}, fmt.Errorf("%q: weight must be a positive integer", line)
	}
	return serverSpec{host: rest[:j], port: port, weight: weight, name: name}, nil
}

// ringName is the name nutcracker hashes the server under.
func (s serverSpec) ringName() string {
	switch {
	case s.name != "":
		return s.name
	case s.port == 11211:
		return s.host
	}
	return s.host + ":" + strconv.Itoa(s.port)
}

func (s serverSpec) addr() string { return net.JoinHostPort(s.host, strconv.Itoa(s.port)) }
