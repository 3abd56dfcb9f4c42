package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/compat"
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
		return nil, err
	}
	return cfg, nil
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
// rejecting keys dst does not have. The error names the key at fault when
// one alone is: a key dst does not have, with [ErrUnknownKey], or one whose
// value does not decode.
func decodeKeys(node *yaml.Node, dst any) *ConfigError {
	err := decodeStrict(node, dst)
	if err == nil {
		return nil
	}
	if node.Kind == yaml.AliasNode && node.Alias != nil {
		node = node.Alias
	}
	if node.Kind != yaml.MappingNode {
		return &ConfigError{Err: err}
	}
	t := reflect.TypeOf(dst).Elem()
	known := yamlKeys(t)
	for i := 0; i+1 < len(node.Content); i += 2 {
		key := node.Content[i].Value
		if !known[key] && key != "<<" {
			return &ConfigError{Key: key, Err: ErrUnknownKey}
		}
		one := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: node.Content[i : i+2]}
		if err := decodeStrict(one, reflect.New(t).Interface()); err != nil {
			return &ConfigError{Key: key, Err: err}
		}
	}
	return &ConfigError{Err: err}
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

// yamlKeys returns the keys a struct of type t decodes, those of its
// inline structs included.
func yamlKeys(t reflect.Type) map[string]bool {
	keys := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case opts == "inline":
			maps.Copy(keys, yamlKeys(f.Type))
		case name != "" && name != "-":
			keys[name] = true
		}
	}
	return keys
}
