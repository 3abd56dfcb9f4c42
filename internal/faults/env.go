package faults

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// The environment variables that choose a run (FromEnv).
const (
	EnvSeed    = "KOLCO_FAULTS_SEED"    // one seed: replays it
	EnvSeeds   = "KOLCO_FAULTS_SEEDS"   // N seeds, from KOLCO_FAULTS_FIRST (default 1)
	EnvFirst   = "KOLCO_FAULTS_FIRST"   // the first seed of SEEDS and UNTIL
	EnvUntil   = "KOLCO_FAULTS_UNTIL"   // a duration: seeds until one fails or it has passed
	EnvSeconds = "KOLCO_FAULTS_SECONDS" // each schedule's length in seconds
	EnvProxies = "KOLCO_FAULTS_PROXIES" // proxies in front of the pool
	EnvExclude = "KOLCO_FAULTS_EXCLUDE" // exclusions: "stall,sentinel+rehash"
	EnvOpen    = "KOLCO_FAULTS_OPEN"    // 1: run the open faults' combinations too
	EnvReport  = "KOLCO_FAULTS_REPORT"  // a file for the summary, rewritten after each seed
)

// Short is the run of `go test ./...`: a few seeds of short schedules.
type Short struct {
	Seeds  []uint64
	Length time.Duration
}

// Open are faults found by the schedules and not fixed yet, each left out
// of every run by default, so that the rest is hunted (KOLCO_FAULTS_OPEN=1
// runs them too). A fault fixed leaves the table with its fix.
var Open = []struct{ Atoms, Why string }{}

// FromEnv returns the run the environment asks for, short's without it,
// and the command line that replays a seed, with %d for it.
func FromEnv(short Short, test string) (Config, error) {
	cfg := Config{Seeds: short.Seeds, Length: short.Length, Proxies: 2, Report: os.Getenv(EnvReport)}
	long := 30 * time.Second
	if err := seedsFromEnv(&cfg, long); err != nil {
		return cfg, err
	}
	if v := os.Getenv(EnvSeconds); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return cfg, fmt.Errorf("%s=%q: want seconds", EnvSeconds, v)
		}
		cfg.Length = time.Duration(n) * time.Second
	}
	if v := os.Getenv(EnvProxies); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 8 {
			return cfg, fmt.Errorf("%s=%q: want 1 to 8 proxies", EnvProxies, v)
		}
		cfg.Proxies = n
	}
	ex, err := exclusionsFromEnv()
	if err != nil {
		return cfg, err
	}
	cfg.Exclusions = ex
	env := fmt.Sprintf("%s=%%d %s=%d %s=%d", EnvSeed, EnvSeconds, int(cfg.Length.Seconds()), EnvProxies, cfg.Proxies)
	if v := os.Getenv(EnvExclude); v != "" {
		env += fmt.Sprintf(" %s=%q", EnvExclude, v)
	}
	if os.Getenv(EnvOpen) == "1" {
		env += " " + EnvOpen + "=1"
	}
	cfg.Replay = env + " go test -count=1 -timeout 30m -v -run '" + test + "' ./cmd/kolco"
	return cfg, nil
}

// seedsFromEnv sets cfg's seeds from EnvFirst and EnvSeed, EnvSeeds or
// EnvUntil; the last two run each schedule for long, over 3 proxies.
func seedsFromEnv(cfg *Config, long time.Duration) error {
	first := uint64(1)
	if v := os.Getenv(EnvFirst); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 {
			return fmt.Errorf("%s=%q: want a seed, 1 or more", EnvFirst, v)
		}
		first = n
	}
	switch {
	case os.Getenv(EnvSeed) != "":
		n, err := strconv.ParseUint(os.Getenv(EnvSeed), 10, 64)
		if err != nil || n == 0 {
			return fmt.Errorf("%s=%q: want a seed, 1 or more", EnvSeed, os.Getenv(EnvSeed))
		}
		cfg.Seeds = []uint64{n}
	case os.Getenv(EnvSeeds) != "":
		n, err := strconv.Atoi(os.Getenv(EnvSeeds))
		if err != nil || n < 1 {
			return fmt.Errorf("%s=%q: want a count of seeds", EnvSeeds, os.Getenv(EnvSeeds))
		}
		cfg.Seeds = nil
		for i := range n {
			cfg.Seeds = append(cfg.Seeds, first+uint64(i))
		}
		cfg.Length, cfg.Proxies = long, 3
	case os.Getenv(EnvUntil) != "":
		d, err := time.ParseDuration(os.Getenv(EnvUntil))
		if err != nil || d <= 0 {
			return fmt.Errorf("%s=%q: want a duration, such as 30m", EnvUntil, os.Getenv(EnvUntil))
		}
		if os.Getenv(EnvFirst) == "" {
			first = uint64(time.Now().UnixNano()%1_000_000) + 1000 // past the fixed seeds
		}
		cfg.Seeds, cfg.Until = []uint64{first}, time.Now().Add(d)
		cfg.Length, cfg.Proxies = long, 3
	}
	return nil
}

// exclusionsFromEnv returns the combinations a schedule leaves out: those
// EnvExclude asks for, and the open faults unless EnvOpen is 1.
func exclusionsFromEnv() ([]Exclusion, error) {
	out, err := ParseExclusions(os.Getenv(EnvExclude), "asked for by "+EnvExclude)
	if err != nil {
		return nil, err
	}
	if os.Getenv(EnvOpen) == "1" {
		return out, nil
	}
	for _, o := range Open {
		ex, err := ParseExclusions(o.Atoms, "open fault: "+o.Why)
		if err != nil {
			return nil, err
		}
		out = append(out, ex...)
	}
	return out, nil
}
