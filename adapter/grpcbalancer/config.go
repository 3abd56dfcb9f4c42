package grpcbalancer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/serviceconfig"

	"github.com/kolco-dev/kolco/adapter/shards"
)

// ErrBadConfig is wrapped by every error about the balancer's
// configuration; the placement's own errors (shards.ErrBadConfig) are
// wrapped beside it.
var ErrBadConfig = errors.New("grpcbalancer: bad configuration")

// Config is the balancer's configuration: the placement, in the words of
// kolco proxy's pools (see package shards), and the request header that
// carries the key.
type Config struct {
	shards.Config
	// Header names the request metadata whose value is a request's key
	// (several values are joined by ","): lower case, not ending in
	// "-bin". Empty means that only keys set with [WithKey] place
	// requests. A key set with WithKey wins over the header, and costs
	// nothing to read; reading the header costs the copy of the metadata
	// that grpc-go makes for every reader, as for ring_hash's header.
	Header string
}

// lbConfig is Config as grpc-go holds a parsed balancer configuration.
type lbConfig struct {
	serviceconfig.LoadBalancingConfig `json:"-"`
	Config
}

// jsonConfig is the configuration's JSON form in a service config.
type jsonConfig struct {
	Distribution string `json:"distribution,omitempty"`
	Hash         string `json:"hash,omitempty"`
	KeyHash      string `json:"keyHash,omitempty"`
	VNodes       int    `json:"vnodes,omitempty"`
	HashTag      string `json:"hashTag,omitempty"`
	Header       string `json:"header,omitempty"`
}

// ServiceConfig returns a service config (for grpc.WithDefaultServiceConfig)
// that selects this balancer with cfg.
func ServiceConfig(cfg Config) string {
	b, _ := json.Marshal(map[string]any{"loadBalancingConfig": []any{map[string]jsonConfig{Name: {
		Distribution: cfg.Distribution, Hash: cfg.Hash, KeyHash: cfg.KeyHash, VNodes: cfg.VNodes,
		HashTag: cfg.HashTag, Header: cfg.Header,
	}}}})
	return string(b)
}

// ParseConfig reads the balancer's configuration from the JSON object of a
// service config's loadBalancingConfig entry, such as
// {"distribution": "jump", "header": "x-user"}. Unknown fields are
// refused. The error wraps [ErrBadConfig].
func ParseConfig(data []byte) (Config, error) {
	var j jsonConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return Config{}, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	if dec.More() {
		return Config{}, fmt.Errorf("%w: data after the object", ErrBadConfig)
	}
	cfg := Config{Header: j.Header, Config: shards.Config{Distribution: j.Distribution, Hash: j.Hash,
		KeyHash: j.KeyHash, VNodes: j.VNodes, HashTag: j.HashTag}}
	return cfg, cfg.Validate()
}

// Validate reports whether the configuration can place requests. The
// error wraps [ErrBadConfig].
func (c Config) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	if err := checkHeader(c.Header); err != nil {
		return fmt.Errorf("%w: header %q: %w", ErrBadConfig, c.Header, err)
	}
	return nil
}

// checkHeader applies grpc-go's rules for a metadata key that is not
// binary, as ring_hash does to its requestHashHeader.
func checkHeader(h string) error {
	if h == "" {
		return nil
	}
	if strings.HasSuffix(h, "-bin") {
		return errors.New("a binary header cannot carry a key")
	}
	if strings.HasPrefix(h, "grpc-") {
		return errors.New("grpc- headers are gRPC's own")
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("character %q: want lower case letters, digits, '-', '_' or '.'", c)
		}
	}
	return nil
}
