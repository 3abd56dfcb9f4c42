package proxy

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// serverLabel returns the labels of a server's metrics in pool p, as the
// text format writes them.
func serverLabel(name, addr string) string {
	return fmt.Sprintf(`addr=%q,pool="p",server=%q`, addr, name)
}

// metricValue returns the value of the sample of metric name whose labels,
// as the text format writes them between the braces, are labels ("" for
// none); it fails the test when there is no such sample.
func metricValue(t testing.TB, s *Server, name, labels string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	s.met.handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Result().Body)
	prefix := name + " "
	if labels != "" {
		prefix = name + "{" + labels + "} "
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %q", name, line)
			}
			return f
		}
	}
	t.Fatalf("no sample %s{%s} in /metrics", name, labels)
	return 0
}
