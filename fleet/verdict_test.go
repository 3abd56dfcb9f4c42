package fleet

import (
	"errors"
	"strings"
	"testing"
)

// TestVerdict: each kind of agreement is said in one sentence, counting
// the processes compared once each.
func TestVerdict(t *testing.T) {
	down := errors.New("connection refused")
	for _, tc := range []struct {
		name    string
		reports []Report
		want    Verdict
	}{
		{"one", []Report{{Name: "a", Fingerprint: "f"}}, Verdict{"agree", "1 proxy, none to compare it with"}},
		{"all agree", []Report{{Name: "a", Fingerprint: "f"}, {Name: "b", Fingerprint: "f"}, {Name: "c", Fingerprint: "f"}},
			Verdict{"agree", "all 3 proxies agree"}},
		{"one stale", []Report{{Name: "a", Fingerprint: "f", Stale: true}, {Name: "b", Fingerprint: "f"}},
			Verdict{"agree", "all 2 proxies agree; 1 may be behind their source"}},
		{"all stale", []Report{{Name: "a", Fingerprint: "f", Stale: true}, {Name: "b", Fingerprint: "f", Stale: true}},
			Verdict{"unknown", "agreement unknown: all 2 proxies are stale (they agree, but may be behind their source)"}},
		{"one differs", []Report{{Name: "a", Fingerprint: "f"}, {Name: "b", Fingerprint: "f"}, {Name: "c", Fingerprint: "g"}},
			Verdict{"differ", "the proxies DO NOT AGREE: 2 of 3 place alike, 1 differs"}},
		{"differs and silent", []Report{{Name: "a", Fingerprint: "f"}, {Name: "b", Fingerprint: "f"}, {Name: "c", Fingerprint: "g"},
			{Name: "d", Fingerprint: "g"}, {Name: "e", Err: down}},
			Verdict{"differ", "the proxies DO NOT AGREE: 2 of 5 place alike, 2 differ, 1 did not answer"}},
		{"one silent", []Report{{Name: "a", Fingerprint: "f"}, {Name: "b", Fingerprint: "f"}, {Name: "c", Err: down}},
			Verdict{"unknown", "agreement unknown: 2 of 3 answered and agree, 1 did not answer"}},
		{"none answered", []Report{{Name: "a", Err: down}}, Verdict{"unknown", "agreement unknown: none of 1 proxies answered"}},
		{"none", nil, Verdict{"unknown", "agreement unknown: no proxy to compare"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Compare(tc.reports).Verdict(); got != tc.want {
				t.Errorf("%+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestDistinct: an answer from the asking process, or from a process that
// answered under another address, is left out and named; answers without
// an instance (an older proxy, an error) are kept.
func TestDistinct(t *testing.T) {
	answers := []Answer{
		{Addr: "self-by-ip", Instance: "me"},
		{Addr: "b", Instance: "p2"},
		{Addr: "b-again", Instance: "p2"},
		{Addr: "old", Instance: ""},
		{Addr: "old-2", Instance: ""},
		{Addr: "c", Instance: "p3"},
	}
	kept, same := Distinct(answers, "me")
	var k, s []string
	for _, a := range kept {
		k = append(k, a.Addr)
	}
	for _, a := range same {
		s = append(s, a.Addr)
	}
	if want := "b old old-2 c"; strings.Join(k, " ") != want || strings.Join(s, " ") != "self-by-ip b-again" {
		t.Errorf("kept %v, same %v; want %s and [self-by-ip b-again]", k, s, want)
	}
}
