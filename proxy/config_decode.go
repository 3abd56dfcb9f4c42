package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/compat"
	"github.com/kolco-dev/kolco/internal/suggest"
	"go.yaml.in/yaml/v3"
)

// LoadConfig reads the configuration file at path and parses it as
// [ParseConfig] does, recording path in the result.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg.Path = path
	return cfg, nil
}

// ParseConfig parses a configuration file - nutcracker.yml, with kolco's
// keys - sets every setting it leaves out to its default, and validates
// it. Unknown keys are errors, as in nutcracker. The error is a
// [*ConfigError].
func ParseConfig(data []byte) (cfg *Config, err error) {
	defer func() {
		// The YAML decoder is not ours; never let a panic in it reach the caller.
		if r := recover(); r != nil {
			cfg, err = nil, &ConfigError{Err: fmt.Errorf("yaml: %v", r)}
		}
	}()
	f, err := compat.ReadNutcracker(data)
	if err != nil {
		var ne *compat.NutcrackerError
		if errors.As(err, &ne) {
			return nil, &ConfigError{Pool: ne.Pool, Key: ne.Key, Line: ne.Line, Err: ne.Err}
		}
		return nil, &ConfigError{Err: err}
	}
	cfg = &Config{Pools: make(map[string]*PoolConfig, len(f.Pools))}
	if f.Kolco != nil {
		if cfg.Global, err = decodeGlobal(f.Kolco); err != nil {
			return nil, err
		}
	}
	for _, fp := range f.Pools {
		p, err := decodePool(fp.Name, fp.Node)
		if err != nil {
			return nil, err
		}
		p.Servers = fp.Servers
		cfg.Pools[fp.Name] = p
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		var ce *ConfigError
		var at serverAt
		switch {
		case !errors.As(err, &ce) || ce.Line != 0:
		case errors.As(err, &at):
			ce.Line = serverLine(f, ce.Pool, at.index)
		default:
			ce.Line = keyLine(f, ce.Pool, ce.Key)
		}
		return nil, err
	}
	return cfg, nil
}

// keyLine returns the line of the file where the setting key of pool (of
// the kolco: mapping when pool is empty) is written, or the nearest line
// above it written: its mapping's, its pool's; 0 when neither is.
func keyLine(f *compat.NutcrackerFile, pool, key string) int {
	var node *yaml.Node
	if pool == "" {
		var ok bool
		if key, ok = strings.CutPrefix(key, GlobalKey+"."); !ok {
			return 0
		}
		node = f.Kolco
	}
	for _, p := range f.Pools {
		if pool != "" && p.Name == pool {
			node = p.Node
		}
	}
	line := 0
	for _, k := range strings.Split(key, ".") {
		if node == nil || node.Kind != yaml.MappingNode {
			break
		}
		line = node.Line
		var next *yaml.Node
		for i := 0; i+1 < len(node.Content); i += 2 {
			if node.Content[i].Value == k {
				line, next = node.Content[i].Line, node.Content[i+1]
			}
		}
		node = next
	}
	return line
}

// serverLine returns the line of the file where the server line index
// (from 0) of pool is written, or that of its servers key.
func serverLine(f *compat.NutcrackerFile, pool string, index int) int {
	line := keyLine(f, pool, "servers")
	for _, p := range f.Pools {
		if p.Name != pool || p.Node.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(p.Node.Content); i += 2 {
			if seq := p.Node.Content[i+1]; p.Node.Content[i].Value == "servers" && seq.Kind == yaml.SequenceNode && index < len(seq.Content) {
				line = seq.Content[index].Line
			}
		}
	}
	return line
}

// poolFile is a pool as the file writes it: PoolConfig's keys, and its
// durations in milliseconds.
type poolFile struct {
	PoolConfig `yaml:",inline"`
	// Servers are parsed with the file (compat.ReadNutcracker): their key
	// is known here, their lines not read again.
	Servers            []string `yaml:"servers"`
	Timeout            int      `yaml:"timeout"`
	ServerRetryTimeout int      `yaml:"server_retry_timeout"`
	ClientIdleTimeout  int      `yaml:"client_idle_timeout"`
	HealthCheck        struct {
		Interval int `yaml:"interval"`
		Timeout  int `yaml:"timeout"`
	} `yaml:"health_check"`
	Warm struct {
		Enabled *bool `yaml:"enabled"`
		Window  int   `yaml:"window"`
		Depth   int   `yaml:"depth"`
		Quiet   int   `yaml:"quiet"`
	} `yaml:"warm"`
}

// globalFile is the proxy-wide settings as the file writes them.
type globalFile struct {
	GlobalConfig    `yaml:",inline"`
	ShutdownTimeout int `yaml:"shutdown_timeout"`
	StatsInterval   int `yaml:"stats_interval"`
}

func decodePool(name string, node *yaml.Node) (*PoolConfig, error) {
	if err := refuseZeros(name, node); err != nil {
		return nil, err
	}
	var f poolFile
	if err := decodeKeys(node, &f); err != nil {
		err.Pool = name
		return nil, err
	}
	p := f.PoolConfig
	p.Warm = Warm{Enabled: f.Warm.Enabled, Depth: f.Warm.Depth, Quiet: f.Warm.Quiet}
	for _, d := range []struct {
		key string
		dst *time.Duration
		ms  int
	}{
		{"timeout", &p.Timeout, f.Timeout},
		{"server_retry_timeout", &p.ServerRetryTimeout, f.ServerRetryTimeout},
		{"client_idle_timeout", &p.ClientIdleTimeout, f.ClientIdleTimeout},
		{"health_check.interval", &p.HealthCheck.Interval, f.HealthCheck.Interval},
		{"health_check.timeout", &p.HealthCheck.Timeout, f.HealthCheck.Timeout},
		{"warm.window", &p.Warm.Window, f.Warm.Window},
	} {
		var err error
		if *d.dst, err = millis(d.ms); err != nil {
			return nil, &ConfigError{Pool: name, Key: d.key, Err: err}
		}
	}
	return &p, nil
}

func decodeGlobal(node *yaml.Node) (GlobalConfig, error) {
	var f globalFile
	if err := decodeKeys(node, &f); err != nil {
		err.Key = GlobalKey + "." + err.Key
		return GlobalConfig{}, err
	}
	g := f.GlobalConfig
	var err error
	if g.ShutdownTimeout, err = millis(f.ShutdownTimeout); err != nil {
		return GlobalConfig{}, &ConfigError{Key: GlobalKey + ".shutdown_timeout", Err: err}
	}
	if g.StatsInterval, err = millis(f.StatsInterval); err != nil {
		return GlobalConfig{}, &ConfigError{Key: GlobalKey + ".stats_interval", Err: err}
	}
	return g, nil
}

// maxMillis is the largest number of milliseconds a time.Duration holds.
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// millis returns a setting in milliseconds as a duration.
func millis(n int) (time.Duration, error) {
	if int64(n) > maxMillis || int64(n) < -maxMillis {
		return 0, fmt.Errorf("%d ms is out of range (at most %d)", n, maxMillis)
	}
	return time.Duration(n) * time.Millisecond, nil
}

// twemproxyZeros are the settings to which nutcracker gives 0 a meaning of
// its own, where kolco's 0 would mean its default: rather than read the
// same config differently, kolco refuses an explicit 0.
var twemproxyZeros = map[string]string{
	"timeout":              "no timeout",
	"server_retry_timeout": "retry at once",
	"server_failure_limit": "eject on the first failure",
}

// refuseZeros returns an error for a pool node that sets one of
// twemproxyZeros to 0.
func refuseZeros(pool string, node *yaml.Node) error {
	if node.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		meaning, ok := twemproxyZeros[k.Value]
		if !ok || v.Kind != yaml.ScalarNode {
			continue
		}
		if n, err := strconv.Atoi(v.Value); err == nil && n == 0 {
			return &ConfigError{Pool: pool, Key: k.Value, Err: fmt.Errorf(
				"0 means %q to nutcracker, which kolco does not do; leave it out for kolco's default or set a positive value", meaning)}
		}
	}
	return nil
}

// decodeKeys decodes a mapping node into dst, a pointer to a struct,
// rejecting keys dst does not have. The error names the key at fault and
// its line: a key dst does not have, with [ErrUnknownKey] and the nearest
// key it has; or one whose value does not decode, with what it wants. The
// YAML library's own words ("cannot unmarshal !!str into []string") and
// lines (of the value re-encoded alone) are not shown.
func decodeKeys(node *yaml.Node, dst any) *ConfigError {
	err := decodeStrict(node, dst)
	if err == nil {
		return nil
	}
	if node.Kind == yaml.AliasNode && node.Alias != nil {
		node = node.Alias
	}
	if node.Kind != yaml.MappingNode {
		return &ConfigError{Line: node.Line, Err: errors.New("want a mapping of settings (key: value)")}
	}
	t := reflect.TypeOf(dst).Elem()
	fields := yamlFields(t)
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		ft, known := fields[k.Value]
		if !known && k.Value != "<<" {
			return &ConfigError{Key: k.Value, Line: k.Line, Err: unknownKey(k.Value, fields)}
		}
		one := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: node.Content[i : i+2]}
		if err := decodeStrict(one, reflect.New(t).Interface()); err != nil {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && v.Kind == yaml.MappingNode {
				if ce := decodeKeys(v, reflect.New(ft).Interface()); ce != nil {
					ce.Key = strings.TrimSuffix(k.Value+"."+ce.Key, ".")
					return ce
				}
			}
			return &ConfigError{Key: k.Value, Line: v.Line, Err: valueError(ft, v)}
		}
	}
	return &ConfigError{Line: node.Line, Err: err}
}

// unknownKey is the error for a key the setting does not have: the
// nearest one it has, as the command line answers a misspelt flag.
func unknownKey(key string, fields map[string]reflect.Type) error {
	names := slices.Sorted(maps.Keys(fields))
	if near := suggest.Nearest(key, names); near != "" {
		return fmt.Errorf("%w (did you mean %s?)", ErrUnknownKey, near)
	}
	return fmt.Errorf("%w: remove it, or see proxy/README.md for the keys", ErrUnknownKey)
}

// valueError says what a setting of type t wants, given v.
func valueError(t reflect.Type, v *yaml.Node) error {
	got := v.Value
	if v.Kind != yaml.ScalarNode {
		got = map[yaml.Kind]string{yaml.MappingNode: "a mapping", yaml.SequenceNode: "a list"}[v.Kind]
	} else {
		got = strconv.Quote(got)
	}
	want := "another value"
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32:
		want = "a whole number"
	case reflect.Bool:
		want = "true or false"
	case reflect.String:
		want = "a single value, quoted if need be"
	case reflect.Float64, reflect.Float32:
		want = "a number"
	case reflect.Slice:
		want = "a list: [a, b]"
	case reflect.Map:
		want = "a mapping: {a: x, b: y}"
	case reflect.Struct:
		want = "a mapping of its settings: {key: value}"
	}
	return fmt.Errorf("%s is not %s", got, want)
}

// decodeStrict decodes node into dst, rejecting unknown fields.
func decodeStrict(node *yaml.Node, dst any) error {
	out, err := yaml.Marshal(node)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	dec.KnownFields(true)
	return dec.Decode(dst)
}

// yamlFields returns the keys a struct of type t decodes, those of its
// inline structs included, each with the type it decodes into: the outer
// struct's where both have one, as the decoder takes it.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	keys := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if _, opts, _ := strings.Cut(f.Tag.Get("yaml"), ","); opts == "inline" {
			maps.Copy(keys, yamlFields(f.Type))
		}
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts != "inline" && name != "" && name != "-" {
			keys[name] = f.Type
		}
	}
	return keys
}

// ServerNames are servers named by name or address: a list in the file,
// or one name alone ("*").
type ServerNames []string

// UnmarshalYAML reads a list of names, or a single name as a list of one.
func (l *ServerNames) UnmarshalYAML(node *yaml.Node) error {
	if node.Kind == yaml.ScalarNode {
		*l = ServerNames{node.Value}
		return nil
	}
	var names []string
	if err := node.Decode(&names); err != nil {
		return errors.New("want a server's name or address, \"*\" for all, or a list of them")
	}
	*l = names
	return nil
}
