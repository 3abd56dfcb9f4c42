package main

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestGossipFleetFlaps measures the failure detector's false suspicions:
// an idle fleet (four sidecars, three proxies and a Go follower, none of
// them stopped) is watched for KOLCO_GOSSIP_FLAPS (a duration, such as
// 60s), and every time a proxy or the follower served fewer than the four
// nodes is counted, with how long it lasted. The members are tuned as
// the other fleet tests' (fleetTuning: fastGossip unless
// KOLCO_GOSSIP_PROBE and KOLCO_GOSSIP_MULT say otherwise). Run it beside a CPU hog to see what a busy machine does:
//
//	for i in $(seq 8); do timeout 120 sh -c 'while :; do :; done' & done
//	KOLCO_GOSSIP_FLAPS=60s KOLCO_GOSSIP_PROBE=1s KOLCO_GOSSIP_MULT=4 go test -count=1 -run TestGossipFleetFlaps -v ./cmd/kolco
//
// It asserts nothing about the count: a figure of the machine, reported.
func TestGossipFleetFlaps(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("KOLCO_GOSSIP_FLAPS"))
	if err != nil {
		t.Skip("a measurement: set KOLCO_GOSSIP_FLAPS to how long to watch (60s)")
	}
	tuning := fleetTuning(t)
	f := startTunedGossipFleet(t, 3, tuning)
	all := []string{"m0", "m1", "m2", "m3"}
	f.agree(t, time.Now(), f.proxies, all...)
	revs := func() []int64 {
		r := []int64{f.follower.View().Revision}
		for _, fp := range f.proxies {
			pm, _ := fp.membership(t)
			r = append(r, pm.Revision)
		}
		return r
	}
	before := revs()
	names := []string{"follower", "proxy 0", "proxy 1", "proxy 2"}
	short := make([]time.Time, len(names)) // when each began serving fewer nodes; zero while whole
	var drops []time.Duration
	var lows []string
	start := time.Now()
	for time.Since(start) < d {
		views := [][]string{nodeIDsOf(f.follower.View())}
		for _, fp := range f.proxies {
			pm, ok := fp.membership(t)
			if !ok { // not answering in time under the load: no news of its view
				pm.Nodes = all
			}
			views = append(views, pm.Nodes)
		}
		for i, v := range views {
			switch whole := slices.Equal(v, all); {
			case !whole && short[i].IsZero():
				short[i] = time.Now()
				lows = append(lows, names[i]+": "+strings.Join(v, ","))
			case whole && !short[i].IsZero():
				drops = append(drops, time.Since(short[i]))
				short[i] = time.Time{}
			}
		}
		time.Sleep(20 * time.Millisecond) // sampling the views
	}
	after := revs()
	changes := int64(0)
	for i := range before {
		changes += after[i] - before[i]
	}
	t.Logf("probe interval %v, suspicion_mult %d, %v idle: %d view changes in the follower and 3 proxies (revisions %v -> %v); %d times a view lacked a live node, lasting %s",
		tuning.probe, tuning.suspicion, d, changes, before, after, len(drops), summary(drops))
	for _, l := range lows {
		t.Logf("  served %s", l)
	}
}
