package proxy

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestFailoversKeptAndShown: a pool keeps its latest failovers, counts
// each server's, and the status page lists them with how long the server
// failed before.
func TestFailoversKeptAndShown(t *testing.T) {
	var f failovers
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	for i := range maxFailovers + 5 {
		f.note(Failover{Server: "shard-a", From: "10.0.0.1:6379", To: "10.0.0.2:6379", At: at.Add(time.Duration(i) * time.Second), Unavailable: 2.5})
	}
	f.note(Failover{Server: "shard-b", From: "10.0.0.3:6379", To: "10.0.0.4:6379", At: at.Add(time.Hour)})
	latest, counts := f.snapshot()
	if len(latest) != maxFailovers || latest[len(latest)-1].Server != "shard-b" || counts["shard-a"] != maxFailovers+5 || counts["shard-b"] != 1 {
		t.Fatalf("%d kept, last %+v, counts %v", len(latest), latest[len(latest)-1], counts)
	}
	var b bytes.Buffer
	d := pageData{Now: at, Pools: []pagePool{pageOf(PoolStatus{Name: "p", Failovers: latest[len(latest)-2:]}, nil)}}
	if err := pageTemplate.Execute(&b, d); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"Failover: shard-a from 10.0.0.1:6379 to 10.0.0.2:6379", "after 2.5 s of failures", "Failover: shard-b from 10.0.0.3:6379 to 10.0.0.4:6379"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Count(page, "of failures") != 1 {
		t.Error("a failover made with no failures seen is shown with a duration")
	}
}
