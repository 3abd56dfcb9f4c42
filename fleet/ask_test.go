package fleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/fleet"
)

// adminServer serves GET /v1/membership as a proxy's admin endpoint
// does, wanting the bearer token s3cret, and answers with handle.
func adminServer(t *testing.T, handle http.HandlerFunc) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/membership", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "this endpoint wants Authorization: Bearer <token>"})
			return
		}
		handle(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestAskReadsEachEndpoint: each endpoint's pools are read, by name, in
// the order of the addresses given, host:port and URL alike; a pool an
// endpoint does not run is reported as such.
func TestAskReadsEachEndpoint(t *testing.T) {
	since := time.Date(2026, 1, 5, 10, 0, 1, 0, time.UTC)
	served := []fleet.PoolStatus{
		{Pool: "cache", Fingerprint: "3f1c", Revision: 42, Since: since, Stale: true, Nodes: []string{"a", "b"}, Down: []string{"b"}},
		{Pool: "sessions", Fingerprint: "9e0d", Revision: 7, Since: since},
	}
	addr := adminServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(fleet.InstanceHeader, "3b9f")
		_ = json.NewEncoder(w).Encode(served)
	})
	addrs := []string{addr, "http://" + addr + "/"}
	answers := fleet.Ask(context.Background(), addrs, "s3cret", 10*time.Second)
	if len(answers) != len(addrs) {
		t.Fatalf("%d answers for %d endpoints", len(answers), len(addrs))
	}
	for i, a := range answers {
		if a.Addr != addrs[i] || a.Err != nil || len(a.Pools) != 2 || a.Instance != "3b9f" {
			t.Fatalf("answer %d: %+v, want endpoint %s's two pools, from instance 3b9f", i, a, addrs[i])
		}
		r := a.Report("cache")
		want := fleet.Report{Name: addrs[i], Fingerprint: "3f1c", Revision: 42, Since: since, Stale: true}
		if r != want || strings.Join(a.Pools["cache"].Down, ",") != "b" {
			t.Errorf("answer %d: report %+v, pool %+v; want %+v", i, r, a.Pools["cache"], want)
		}
		if r := a.Report("nosuch"); r.Err == nil || !strings.Contains(r.Err.Error(), `runs no pool "nosuch"`) || r.Name != addrs[i] {
			t.Errorf("answer %d: report on an unknown pool %+v", i, r)
		}
	}
}

// TestAskSaysWhyNot: an endpoint that refuses the token, answers what is
// not a list of statuses, answers too much, does not answer within the
// timeout, or is no admin address, is reported with why, and the others
// are still read.
func TestAskSaysWhyNot(t *testing.T) {
	good := adminServer(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`[{"pool":"p","fingerprint":"f"}]`))
	})
	garbled := adminServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"pool":`)) })
	huge := adminServer(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("[" + strings.Repeat(" ", 17<<20) + "]"))
	})
	silent := adminServer(t, func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	for _, tc := range []struct {
		name, addr, token, want string
	}{
		{"wrong token", good, "wrong", "401 Unauthorized: this endpoint wants Authorization"},
		{"garbled", garbled, "s3cret", "its answer"},
		{"over 16 MiB", huge, "s3cret", "its answer"},
		{"silent", silent, "s3cret", context.DeadlineExceeded.Error()},
		{"another scheme", "ftp://" + good, "s3cret", "want host:port or an http(s) URL"},
		{"no port", "nohost", "s3cret", "missing port"},
		{"no host", "http://", "s3cret", "want host:port or an http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answers := fleet.Ask(context.Background(), []string{tc.addr, good}, tc.token, time.Second)
			if err := answers[0].Err; err == nil || !strings.Contains(err.Error(), tc.want) || answers[0].Pools != nil {
				t.Errorf("%s: %+v, want an error saying %q", tc.addr, answers[0], tc.want)
			}
			if r := answers[0].Report("p"); r.Err != answers[0].Err {
				t.Errorf("report %+v, want the endpoint's error", r)
			}
			if tc.token == "s3cret" && (answers[1].Err != nil || answers[1].Pools["p"].Fingerprint != "f") {
				t.Errorf("the good endpoint beside it: %+v", answers[1])
			}
		})
	}
}

// TestAskStopsWithItsContext: a cancelled context ends every question.
func TestAskStopsWithItsContext(t *testing.T) {
	silent := adminServer(t, func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, a := range fleet.Ask(ctx, []string{silent, silent}, "s3cret", time.Hour) {
		if !errors.Is(a.Err, context.Canceled) {
			t.Errorf("%+v, want the context's cancellation", a)
		}
	}
}

// FuzzAdminURL: any address gives a clear error or an http(s) base URL,
// never a panic.
func FuzzAdminURL(f *testing.F) {
	for _, s := range []string{"10.0.0.2:22223", "https://proxy-3:22223/", "ftp://h:1", "nohost", "", "://", "[::1]:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		base, err := fleet.AdminURL(addr)
		if err != nil {
			return
		}
		u, perr := url.Parse(base)
		if perr != nil || u.Host == "" || !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
			t.Errorf("AdminURL(%q) = %q, not an http(s) URL with a host (%v)", addr, base, perr)
		}
	})
}
