package proxy

import (
	"go/types"
	"slices"
	"testing"
)

// Server is made of parts that own their state (listening, sourcing,
// sideEndpoints, adminReads; see docs/architecture.md): each is given
// what it needs of the server as fields of its own, funcs or shared
// pieces, never the server itself, so that a part's methods cannot be
// the server's under another name.

// TestServerPartsHoldNoServer fails for a type of the package, other than
// Server, with a field that holds a Server.
func TestServerPartsHoldNoServer(t *testing.T) {
	t.Parallel()
	if got := holdersOfServer(t, nil); len(got) > 0 {
		t.Errorf("types holding a Server: %v; give them what they read instead (see server_reads.go)", got)
	}
}

// TestServerPartsCatchHolder: a planted part that reaches back through a
// *Server is reported.
func TestServerPartsCatchHolder(t *testing.T) {
	t.Parallel()
	got := holdersOfServer(t, map[string]string{
		"server_planted.go": "package proxy\n\ntype plantedPart struct{ srv *Server }\n",
	})
	if want := []string{"plantedPart.srv"}; !slices.Equal(got, want) {
		t.Errorf("holders: %v, want %v", got, want)
	}
}

// holdersOfServer returns "Type.field" for each field of a struct type of
// the package, with extra files added by name, that holds a Server or a
// pointer to one, sorted.
func holdersOfServer(t *testing.T, extra map[string]string) []string {
	t.Helper()
	c := check(t, extra)
	server := c.pkg.Scope().Lookup("Server").Type()
	var out []string
	for _, name := range c.pkg.Scope().Names() {
		tn, ok := c.pkg.Scope().Lookup(name).(*types.TypeName)
		if !ok || tn.Type() == server {
			continue
		}
		st, ok := tn.Type().Underlying().(*types.Struct)
		if !ok {
			continue
		}
		for f := range st.Fields() {
			ft := f.Type()
			if p, ok := ft.(*types.Pointer); ok {
				ft = p.Elem()
			}
			if types.Identical(ft, server) {
				out = append(out, name+"."+f.Name())
			}
		}
	}
	slices.Sort(out)
	return out
}
