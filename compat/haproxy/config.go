package haproxy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kolco-dev/kolco"
)

// sectionKeywords start the sections of a haproxy.cfg (HAProxy 2.6).
var sectionKeywords = map[string]bool{
	"global": true, "defaults": true, "frontend": true, "backend": true, "listen": true,
	"userlist": true, "peers": true, "resolvers": true, "mailers": true, "program": true,
	"http-errors": true, "ring": true, "cache": true, "fcgi-app": true, "log-forward": true,
}

// Section is a backend or listen section of a whole configuration, as
// [ParseConfig] finds it, with the defaults section it inherits.
type Section struct {
	// Name is the section's name; empty for a text of bare lines.
	Name     string
	defaults []string // the inherited defaults' lines, outermost first
	lines    []string // the section's own lines, its header first
	err      error    // a defaults section named by "from" that is not there
}

// Backend reads the section, after the defaults it inherits (their
// hash-type, default-server and hash-balance-factor), as [ParseBackend]
// reads a backend. A section is read only when asked for, so that a
// configuration whose other backends use what this package does not model
// can still be used.
func (s Section) Backend() (Backend, error) {
	if s.err != nil {
		return Backend{}, s.err
	}
	r := newBackendReader()
	for _, l := range s.defaults {
		if err := r.read(l); err != nil {
			return Backend{}, fmt.Errorf("defaults of %s: %w", s.Name, err)
		}
	}
	for _, l := range s.lines {
		if err := r.read(l); err != nil {
			return Backend{}, err
		}
	}
	return r.backend()
}

// ParseConfig finds the backend and listen sections of a whole haproxy.cfg
// that have server lines, in order; the others place no keys. Each inherits
// the defaults section before it, or the one its "from" names, as HAProxy
// 2.6 does; a defaults section starts afresh unless it too says "from". A
// text without any section keyword is read as the lines of one unnamed
// backend, as [ParseBackend] reads them. Errors wait in the sections, for
// [Section.Backend] to return.
func ParseConfig(text string) []Section {
	c := configReader{named: map[string]defaults{}}
	for _, line := range strings.Split(text, "\n") {
		if f := fields(line); len(f) > 0 && sectionKeywords[f[0]] {
			c.header(f, line)
		} else {
			c.line(line)
		}
	}
	c.close()
	if c.headers == 0 {
		return []Section{{lines: strings.Split(text, "\n")}}
	}
	var out []Section
	for _, s := range c.out {
		if hasServers(s.lines) {
			out = append(out, s)
		}
	}
	return out
}

// defaults is a defaults section: its lines after those it inherits.
type defaults struct {
	lines []string
	err   error
}

// configReader follows the sections of a configuration.
type configReader struct {
	out     []Section
	named   map[string]defaults
	defs    defaults // the defaults in force, or being read
	defName string   // the name of the defaults section being read
	reading byte     // 'd' a defaults section, 'b' a backend or listen, 0 another
	headers int
}

// header starts the section whose header line has words f.
func (c *configReader) header(f []string, line string) {
	c.close()
	c.headers++
	name, from := sectionName(f)
	inherited := c.defs
	if from != "" {
		var ok bool
		if inherited, ok = c.named[from]; !ok {
			inherited = defaults{err: fmt.Errorf("%w: haproxy: %s %s: no defaults section %q before it", kolco.ErrBadConfig, f[0], name, from)}
		}
	}
	switch f[0] {
	case "defaults":
		if from == "" {
			inherited = defaults{}
		}
		// Clip, so that the new section's lines never share an array with
		// what an earlier section inherited.
		c.defs = defaults{lines: append(slices.Clip(inherited.lines), line), err: inherited.err}
		c.reading, c.defName = 'd', name
	case "backend", "listen":
		c.out = append(c.out, Section{Name: name, defaults: inherited.lines, lines: []string{line}, err: inherited.err})
		c.reading = 'b'
	default:
		c.reading = 0
	}
}

// line adds a line to the section being read.
func (c *configReader) line(line string) {
	switch c.reading {
	case 'd':
		c.defs.lines = append(c.defs.lines, line)
	case 'b':
		s := &c.out[len(c.out)-1]
		s.lines = append(s.lines, line)
	}
}

// close ends the section being read: a named defaults section becomes
// available to "from".
func (c *configReader) close() {
	if c.reading == 'd' && c.defName != "" {
		c.named[c.defName] = c.defs
	}
}

// sectionName returns the name and the "from" of a section header,
// "backend NAME [from DEFAULTS]" or "defaults [NAME] [from DEFAULTS]".
func sectionName(f []string) (name, from string) {
	for i := 1; i < len(f); i++ {
		switch {
		case f[i] == "from" && i+1 < len(f):
			from = f[i+1]
			i++
		case name == "":
			name = f[i]
		}
	}
	return name, from
}

// hasServers reports whether a section has server lines.
func hasServers(lines []string) bool {
	for _, l := range lines {
		if f := fields(l); len(f) > 0 && (f[0] == "server" || f[0] == "server-template") {
			return true
		}
	}
	return false
}
