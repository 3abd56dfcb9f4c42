package proxy

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kolco-dev/kolco/fleet"
)

// MembershipStatus is where a pool's servers come from and how current
// they are, as the admin endpoint reports it (GET /v1/membership, and in
// each [PoolStatus]): the wire type the fleet comparisons read too.
type MembershipStatus = fleet.PoolStatus

// membershipStatus returns the membership status of the entry's pool.
func (e poolEntry) membershipStatus() MembershipStatus {
	p := e.p
	ms := MembershipStatus{Pool: p.name, Source: p.cfg.Membership.String(), Distribution: p.cfg.Distribution,
		Fingerprint: p.fingerprint(), Since: e.since, Shared: isTwemproxy(p.cfg) || !settingsOf(p.cfg).historyDependent(),
		Retiring: p.retiring.Load() > 0 || p.lateWrites.Load() > 0}
	for _, b := range p.backends {
		ms.Nodes = append(ms.Nodes, b.name())
		if b.health.isDown() {
			ms.Down = append(ms.Down, b.name())
		}
	}
	if v := p.members; v != nil {
		ms.Revision, ms.Drained, ms.Shared = v.revision, v.drained, v.shared
	}
	if e.ps == nil {
		return ms
	}
	if e.ps.gossip != nil {
		ms.Gossip = gossipWire(e.ps.gossip.Status())
	}
	st := e.ps.state()
	ms.SourceRevision, ms.Versions, ms.Changes, ms.Resyncs = st.revision, st.versions, e.ps.applied.Load(), st.resyncs
	if !st.lastAnswer.IsZero() {
		ms.LastAnswer = &st.lastAnswer
	}
	if st.err != nil {
		ms.Stale, ms.Error = true, st.err.Error()
	}
	return ms
}

// Membership metrics, by pool.
var (
	descRevision = prometheus.NewDesc("kolco_proxy_membership_revision",
		"The membership source's revision of the servers the pool uses (0 for the configuration file's).", []string{"pool"}, nil)
	descStale = prometheus.NewDesc("kolco_proxy_membership_stale",
		"1 while the pool's servers may be behind its membership source (unreachable, no answer yet, content refused, a version not served), else 0.", []string{"pool"}, nil)
	descAnswerAge = prometheus.NewDesc("kolco_proxy_membership_last_answer_age_seconds",
		"Seconds since the pool's membership source last answered; absent before its first answer.", []string{"pool"}, nil)
	descChanges = prometheus.NewDesc("kolco_proxy_membership_changes_total",
		"Versions of the membership source the pool was changed to.", []string{"pool"}, nil)
	descPlacement = prometheus.NewDesc("kolco_proxy_placement_info",
		"1 for each pool, labelled with the fingerprint of its placement and where its servers come from: proxies agree on a pool when their fingerprints are equal.",
		[]string{"pool", "fingerprint", "source"}, nil)
)

// sourceCollector reports each pool's membership.
type sourceCollector struct{ reads *adminReads }

func (c sourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRevision, descStale, descAnswerAge, descChanges, descPlacement} {
		ch <- d
	}
}

func (c sourceCollector) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	for _, e := range c.reads.entries() {
		ms := e.membershipStatus()
		ch <- prometheus.MustNewConstMetric(descPlacement, prometheus.GaugeValue, 1, ms.Pool, ms.Fingerprint, ms.Source)
		ch <- prometheus.MustNewConstMetric(descRevision, prometheus.GaugeValue, float64(ms.Revision), ms.Pool)
		if e.ps == nil {
			continue
		}
		stale := 0.0
		if ms.Stale {
			stale = 1
		}
		ch <- prometheus.MustNewConstMetric(descStale, prometheus.GaugeValue, stale, ms.Pool)
		ch <- prometheus.MustNewConstMetric(descChanges, prometheus.CounterValue, float64(ms.Changes), ms.Pool)
		if ms.LastAnswer != nil {
			ch <- prometheus.MustNewConstMetric(descAnswerAge, prometheus.GaugeValue, now.Sub(*ms.LastAnswer).Seconds(), ms.Pool)
		}
	}
}
