package nginx

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
)

const wholeConfig = `
worker_processes 1;
events { worker_connections 64; }
http {
    map $arg_x $pool { default "a{b}"; }   # a quoted brace is a word
    upstream first {
        hash $arg_k consistent;
        server 127.0.0.1:19001 weight=2;
        server 127.0.0.1:19002;
    }
    server {
        listen 127.0.0.1:8080;
        location / { return 200 "# not a comment; }"; }
    }
    upstream rr {              # round robin: backup is fine there
        server 127.0.0.1:19003;
        server 127.0.0.1:19004 backup;
    }
}
stream {
    upstream "third" {
        hash $remote_addr;
        server 127.0.0.1:19005;
    }
}
`

func TestParseConfig(t *testing.T) {
	blocks, err := ParseConfig(wholeConfig)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range blocks {
		names = append(names, b.Name)
	}
	if fmt.Sprint(names) != "[first rr third]" {
		t.Fatalf("upstream names = %v, want [first rr third]", names)
	}
	for _, c := range []struct {
		block int
		want  Upstream
	}{
		{0, Upstream{Name: "first", Key: "$arg_k", Consistent: true, Servers: []Server{{Addr: "127.0.0.1:19001", Weight: 2}, {Addr: "127.0.0.1:19002", Weight: 1}}}},
		{2, Upstream{Name: "third", Key: "$remote_addr", Servers: []Server{{Addr: "127.0.0.1:19005", Weight: 1}}}},
	} {
		t.Run(c.want.Name, func(t *testing.T) {
			u, err := blocks[c.block].Upstream()
			if err != nil || fmt.Sprint(u) != fmt.Sprint(c.want) {
				t.Errorf("Upstream() = %+v, %v\nwant %+v", u, err, c.want)
			}
		})
	}
	// The round-robin upstream is found, but is not a hash placement.
	if _, err := blocks[1].Upstream(); !errors.Is(err, kolco.ErrBadConfig) || !strings.Contains(err.Error(), "rr") {
		t.Errorf("rr: err = %v, want ErrBadConfig naming the upstream", err)
	}
}

func TestParseConfigBare(t *testing.T) {
	text := "hash $arg_k consistent;\nserver 127.0.0.1:1;\n"
	blocks, err := ParseConfig(text)
	if err != nil || len(blocks) != 1 || blocks[0].Name != "" || blocks[0].Text != text {
		t.Fatalf("ParseConfig(bare directives) = %+v, %v; want one unnamed block of the whole text", blocks, err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		text string
	}{
		{"unclosed block", "http { upstream a { server b; }"},
		{"unclosed upstream", "upstream a { server b;"},
		{"stray brace", "server a; }"},
		{"unterminated quote", `upstream a { server "b; }`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := ParseConfig(c.text); !errors.Is(err, kolco.ErrBadConfig) {
				t.Errorf("err = %v, want ErrBadConfig", err)
			}
		})
	}
}

// TestTokens checks the word splitting against what nginx reads.
func TestTokens(t *testing.T) {
	for _, c := range []struct {
		text string
		want string
	}{
		{"server a;", "[server a ;]"},
		{`server "a b" 'c;d';`, "[server a b c;d ;]"},
		{"set $x ${y}z;", "[set $x ${y}z ;]"},
		{"a{b}", "[a { b}]"}, // "}" inside a word is part of it
		{"a#b # c\nd;", "[a#b d ;]"},
		{`x "\"q\"";`, `[x \"q\" ;]`},
	} {
		t.Run(c.text, func(t *testing.T) {
			toks, err := tokens(c.text)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tk := range toks {
				if tk.kind == 'w' {
					got = append(got, tk.text)
				} else {
					got = append(got, string(tk.kind))
				}
			}
			if fmt.Sprint(got) != c.want {
				t.Errorf("tokens = %v, want %v", got, c.want)
			}
		})
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add(wholeConfig)                                    // a whole nginx.conf
	f.Add("upstream u { hash $k consistent; server a; }") // one block
	f.Add("server a;")                                    // bare directives
	f.Add(`upstream "x{" { server "}"; }`)                // braces in quotes
	f.Add("a { b { c { upstream d { } } }")               // unbalanced
	f.Fuzz(func(t *testing.T, text string) {
		blocks, err := ParseConfig(text)
		if err != nil {
			if !errors.Is(err, kolco.ErrBadConfig) {
				t.Fatalf("error %v does not wrap ErrBadConfig", err)
			}
			return
		}
		for _, b := range blocks {
			if b.Name != "" && (!strings.HasPrefix(b.Text, "upstream") || !strings.HasSuffix(b.Text, "}")) {
				t.Fatalf("block %q = %q: want the text from upstream to its brace", b.Name, b.Text)
			}
			if u, err := b.Upstream(); err == nil && len(u.Servers) == 0 {
				t.Fatalf("block %q read without servers", b.Name)
			}
		}
	})
}
