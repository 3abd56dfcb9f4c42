package grpcbalancer_test

import (
	"errors"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/grpcbalancer"
	"github.com/kolco-dev/kolco/adapter/shards"
)

func TestParseConfig(t *testing.T) {
	cfg, err := grpcbalancer.ParseConfig([]byte(`{"distribution": "ring", "keyHash": "xxh64", "vnodes": 200, "hashTag": "{}", "header": "x-user"}`))
	want := grpcbalancer.Config{Config: shards.Config{Distribution: "ring", KeyHash: "xxh64", VNodes: 200, HashTag: "{}"}, Header: "x-user"}
	if err != nil || cfg != want {
		t.Fatalf("ParseConfig: %+v, %v", cfg, err)
	}
	round, err := grpcbalancer.ParseConfig([]byte(`{"distribution":"ring","keyHash":"xxh64","vnodes":200,"hashTag":"{}","header":"x-user"}`))
	if err != nil || round != cfg {
		t.Fatalf("ParseConfig: %+v, %v", round, err)
	}
	for _, c := range []struct {
		name, json string
		also       error
	}{
		{"unknown field", `{"distribution": "ring", "replicas": 2}`, nil},
		{"not an object", `[1]`, nil},
		{"two objects", `{} {}`, nil},
		{"unknown distribution", `{"distribution": "nope"}`, kolco.ErrBadConfig},
		{"twemproxy hash on jump", `{"distribution": "jump", "hash": "md5"}`, kolco.ErrBadConfig},
		{"binary header", `{"header": "x-key-bin"}`, nil},
		{"upper-case header", `{"header": "X-Key"}`, nil},
		{"grpc header", `{"header": "grpc-timeout"}`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := grpcbalancer.ParseConfig([]byte(c.json))
			if !errors.Is(err, grpcbalancer.ErrBadConfig) || c.also != nil && !errors.Is(err, c.also) {
				t.Fatalf("error %v", err)
			}
		})
	}
}

// TestServiceConfig checks that the service config names the policy with
// the configuration ParseConfig reads back.
func TestServiceConfig(t *testing.T) {
	cfg := grpcbalancer.Config{Config: shards.Config{Distribution: "ketama", Hash: "md5", HashTag: "{}"}, Header: "x-k"}
	want := `{"loadBalancingConfig":[{"kolco_hash":{"distribution":"ketama","hash":"md5","hashTag":"{}","header":"x-k"}}]}`
	if got := grpcbalancer.ServiceConfig(cfg); got != want {
		t.Fatalf("ServiceConfig:\n%s\nwant\n%s", got, want)
	}
}

// FuzzParseConfig checks that any configuration is read or refused with
// ErrBadConfig, and that what is read is valid.
func FuzzParseConfig(f *testing.F) {
	f.Add(`{"distribution": "jump", "header": "x-user"}`)
	f.Add(`{"distribution": "ketama", "hash": "murmur", "hashTag": "{}"}`)
	f.Add(`{"vnodes": -1}`)               // negative
	f.Add(`{"header": "x-a-bin"}`)        // binary header
	f.Add(`{"distribution": 3}`)          // not a string
	f.Add(`{"keyHash": "fnv1a"} trailer`) // data after the object
	f.Fuzz(func(t *testing.T, data string) {
		cfg, err := grpcbalancer.ParseConfig([]byte(data))
		if err != nil {
			if !errors.Is(err, grpcbalancer.ErrBadConfig) {
				t.Fatalf("error %v does not wrap ErrBadConfig", err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("read %+v, which is not valid: %v", cfg, err)
		}
	})
}
