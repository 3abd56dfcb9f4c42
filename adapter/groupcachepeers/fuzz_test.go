package groupcachepeers

import (
	"strings"
	"testing"
)

// FuzzParsePath checks that any request path is split or refused, and that
// a split path is the base, the group, a slash and the key.
func FuzzParsePath(f *testing.F) {
	f.Add("/_groupcache/users/user:42", "/_groupcache/")
	f.Add("/_groupcache/users/a/b/c", "/_groupcache/") // a key with slashes
	f.Add("/_groupcache//k", "/_groupcache/")          // no group
	f.Add("/elsewhere", "/_groupcache/")
	f.Fuzz(func(t *testing.T, path, base string) {
		group, key, err := parsePath(path, base)
		if err != nil {
			return
		}
		if group == "" || strings.Contains(group, "/") || base+group+"/"+key != path {
			t.Fatalf("parsePath(%q, %q) = %q, %q", path, base, group, key)
		}
	})
}
