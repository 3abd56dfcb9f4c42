package shards_test

import (
	"testing"

	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// FuzzTagged checks that the tag rule on strings is twemproxy's on bytes,
// for any key and tag.
func FuzzTagged(f *testing.F) {
	f.Add("user:{42}:name", byte('{'), byte('}'))
	f.Add("{}", byte('{'), byte('}'))     // empty text: the whole key
	f.Add("a{b", byte('{'), byte('}'))    // no closing character
	f.Add("x}y{z}", byte('{'), byte('}')) // a closing one before the opening one
	f.Add("$$abc$", byte('$'), byte('$')) // one character opens and closes
	f.Fuzz(func(t *testing.T, key string, open, close byte) {
		tag := [2]byte{open, close}
		if got, want := shards.Tagged(key, tag), string(twemproxy.Tagged([]byte(key), tag)); got != want {
			t.Fatalf("Tagged(%q, %q) = %q, twemproxy's %q", key, tag[:], got, want)
		}
	})
}
