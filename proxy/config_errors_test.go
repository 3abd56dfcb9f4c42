package proxy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigErrorsNameLineKeyAndFix: each configuration error names the
// file, the line at fault, the key, what is wrong and what would do -
// never the YAML library's words or the line of a value re-encoded alone.
func TestConfigErrorsNameLineKeyAndFix(t *testing.T) {
	const head = "p:\n  listen: 127.0.0.1:1\n"
	const servers = "  servers: [\"a:1:1\"]\n"
	for _, tc := range []struct {
		name, yaml string
		line       int
		key        string
		says       []string
	}{
		{"misspelt key", head + "  distrbution: ketama\n" + servers, 3, "distrbution", []string{"unknown key", "did you mean distribution?"}},
		{"misspelt nested key", head + "  health_check:\n    intervl: 5\n" + servers, 4, "health_check.intervl", []string{"did you mean interval?"}},
		{"misspelt kolco key", "kolco:\n  metrics: x\n" + head + servers, 2, "kolco.metrics", []string{"did you mean metrics_listen?"}},
		{"not a number", head + "\n  timeout: soon\n" + servers, 4, "timeout", []string{`"soon" is not a whole number`}},
		{"tab", head + "\ttimeout: 5\n" + servers, 3, "", []string{"indented with a tab", "spaces"}},
		{"tab further down", head + "  timeout: 5\n  servers:\n   - a:1:1\n\t - b:1:1\n", 6, "", []string{"indented with a tab"}},
		{"bad hash", head + "  hash: sha1\n" + servers, 3, "hash", []string{`"sha1": want one of`}},
		{"list wanted", head + "  distribution: ring\n  sweep:\n    exclusive: {a: 1}\n" + servers, 5, "sweep.exclusive", []string{"is not a list"}},
		{"a weight flip takes none", head + "  distribution: flip\n  servers:\n   - a:1:1\n   - b:1:3\n", 6, "servers",
			[]string{`2: "b:1:3" has weight 3`, "flip takes no weights", "write its weight as 1"}},
		{"a weight binomial takes none", head + "  distribution: binomial\n  servers: [\"a:1:2\"]\n", 4, "servers", []string{"binomial takes no weights"}},
		{"a weight power takes none", head + "  distribution: power\n  servers:\n   - a:1:2 x\n", 5, "servers", []string{"power takes no weights"}},
		{"no weight", head + "  distribution: flip\n  servers:\n   - a:1:1\n   - b:1 y\n", 6, "servers", []string{"want \"host:port:weight [name]\""}},
		{"a name twice", head + "  servers:\n   - a:1:1 x\n   - b:1:1 y\n   - c:1:1 x\n", 6, "servers", []string{`3: "c:1:1 x" has the name "x", as server 1 has`}},
		{"ejection none with auto_eject_hosts", head + "  auto_eject_hosts: true\n  ejection: none\n" + servers, 4, "ejection",
			[]string{"none never marks a server down", "ejection: rehash"}},
		{"etcd prefix without a slash", head + "  distribution: ring\n  membership:\n    etcd: {endpoints: [\"http://127.0.0.1:2379\"], prefix: kolco/p/}\n" + servers,
			4, "membership", []string{`write "/kolco/p/"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "nutcracker.yml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadConfig(path)
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("%v, want a *ConfigError", err)
			}
			msg := err.Error()
			if ce.Line != tc.line || ce.Key != tc.key || !strings.HasPrefix(msg, path+": ") || strings.Contains(msg, "unmarshal") {
				t.Errorf("%q: line %d, key %q; want %s, line %d, key %q", msg, ce.Line, ce.Key, path, tc.line, tc.key)
			}
			for _, s := range tc.says {
				if !strings.Contains(msg, s) {
					t.Errorf("%q does not say %q", msg, s)
				}
			}
		})
	}
}

// TestSweepExclusiveOneName: sweep: {exclusive: "*"} - one name, not a
// list - is read as the list of it, as the documentation writes it.
func TestSweepExclusiveOneName(t *testing.T) {
	cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:1\n  distribution: ring\n  sweep: {exclusive: \"*\"}\n  servers: [\"a:1:1\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Pools["p"].Sweep.Exclusive; len(got) != 1 || got[0] != "*" {
		t.Errorf("exclusive %q, want [*]", got)
	}
}

// TestCheckSaysTheDefaultVNodes: --check gives the number of points a
// ring places per unit of weight when the file leaves vnodes out, not 0.
func TestCheckSaysTheDefaultVNodes(t *testing.T) {
	for _, tc := range []struct{ dist, vnodes, want string }{
		{"ring", "", "(160 vnodes per unit of weight, the default)"},
		{"ring", "  vnodes: 40\n", "(40 vnodes per unit of weight)"},
		{"bounded", "", "(64 vnodes per unit of weight, the default)"},
		{"jump", "", "over xxh3 of the whole key; not"},
	} {
		cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:1\n  distribution: " + tc.dist + "\n" + tc.vnodes + "  servers: [\"a:1:1\"]\n"))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := cfg.Explain(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) || strings.Contains(b.String(), "0 = default") {
			t.Errorf("%s%s: --check says\n%s\nwant %q", tc.dist, tc.vnodes, b.String(), tc.want)
		}
	}
}
