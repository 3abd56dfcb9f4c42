package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// PoolStatus is where a pool's servers come from and how current
// they are, as a kolco proxy's admin endpoint reports it (GET
// /v1/membership, a list of them). Proxies agree on a pool when their
// fingerprints are equal; a server down (Down) is the proxy's local
// health, not in the fingerprint.
type PoolStatus struct {
	Pool string `json:"pool"`
	// Source is where the servers come from: "configuration" (the
	// file's servers list), or the membership source, such as
	// "etcd /kolco/cache/ at http://10.0.0.1:2379".
	Source       string `json:"source"`
	Distribution string `json:"distribution"`
	// Revision is the source's revision of the servers in use (0 for the
	// configuration); for etcd the store's, the same in every proxy; for
	// gossip each proxy's own count of the node sets it has seen, so that
	// proxies in step may differ in it (gossip has no shared sequence of
	// changes): compare fingerprints.
	Revision int64 `json:"revision"`
	// Fingerprint is that of the placement in use: equal for two pools
	// exactly when they place every key alike (kolco.Fingerprint; for
	// ketama and modula a digest of what nutcracker places by).
	Fingerprint string `json:"fingerprint"`
	// Since is when the pool began placing keys by Fingerprint.
	Since time.Time `json:"since"`
	// Retiring reports that a pool the proxy replaced (a reload, or a
	// change of its source) still answers requests in flight, routed by
	// the placement before Fingerprint, or that a request the proxy gave
	// up on at its timeout may still run on its server (its connection is
	// still open): a store's move and a sweep wait until no proxy of the
	// fleet has any.
	Retiring bool `json:"retiring,omitempty"`
	// Shared reports that another proxy following the same source places
	// alike at this revision however late it started (see membership.View);
	// false for a history-dependent distribution whose state the source
	// does not keep.
	Shared bool `json:"shared"`
	// Stale reports that the servers in use may be behind the source:
	// it cannot be reached, has not answered yet, gave content it
	// refuses, or a version the pool cannot serve. Error says why.
	Stale bool   `json:"stale"`
	Error string `json:"error,omitempty"`
	// LastAnswer is when the source last answered; nil for the
	// configuration, or before the first answer.
	LastAnswer *time.Time `json:"last_answer,omitempty"`
	// SourceRevision is the newest revision the source gave, above
	// Revision while a version is not served; Versions counts the versions
	// it gave, Changes those the pool was changed to.
	SourceRevision int64 `json:"source_revision,omitempty"`
	Versions       int64 `json:"versions,omitempty"`
	Changes        int64 `json:"changes,omitempty"`
	// Resyncs counts the source's full re-reads after a gap, such as a
	// watch that resumed past etcd's compacted history.
	Resyncs int64 `json:"resyncs,omitempty"`
	// Nodes are the servers that take keys, by name; Drained the nodes
	// the source lists that take none; Down the servers the proxy treats
	// as down.
	Nodes   []string `json:"nodes"`
	Drained []string `json:"drained,omitempty"`
	Down    []string `json:"down,omitempty"`
	// Gossip is what the proxy's member of a gossip pool knows of the
	// pool; nil for other sources.
	Gossip *GossipStatus `json:"gossip,omitempty"`
}

// GossipStatus is what a proxy's member of a gossip pool knows of it
// (membership/gossip's Status): the pool's members, the ones that did
// not answer its probes, and how the failure detector has fared.
type GossipStatus struct {
	// Member and Addr are the proxy's name and gossip address in the
	// pool; JoinError says why it has not joined it, while Alone.
	Member    string `json:"member"`
	Addr      string `json:"addr"`
	Alone     bool   `json:"alone,omitempty"`
	JoinError string `json:"join_error,omitempty"`
	// Health is memberlist's health score of the proxy's member, 0 to 7:
	// above 0 it misses its own probes' answers (a busy machine), probes
	// more slowly, and its suspicions of others are the doubtful ones.
	Health int `json:"health"`
	// Nodes and Observers are the pool's live members, by name.
	Nodes     []GossipMember `json:"nodes"`
	Observers []GossipMember `json:"observers"`
	// Suspects are the members that did not answer the proxy's last
	// probe of them: found dead unless they refute it in time.
	Suspects []string `json:"suspects,omitempty"`
	// Suspected counts the proxy's suspicions of others, Refuted its
	// answers to suspicions of itself, Deaths the members it saw found
	// dead or leave, and Returns those that came back after (a restart,
	// or a live member wrongly found dead: see Refuted on its side).
	Suspected int64      `json:"suspected"`
	Refuted   int64      `json:"refuted"`
	Deaths    int64      `json:"deaths"`
	Returns   int64      `json:"returns"`
	LastDeath *time.Time `json:"last_death,omitempty"`
}

// GossipMember is a live member of a gossip pool.
type GossipMember struct {
	Name    string `json:"name"`
	Addr    string `json:"addr"`
	Drained bool   `json:"drained,omitempty"`
	Suspect bool   `json:"suspect,omitempty"`
}

// Report returns s as the report of the process name, for [Compare].
func (s PoolStatus) Report(name string) Report {
	return Report{Name: name, Fingerprint: s.Fingerprint, Revision: s.Revision, Since: s.Since, Stale: s.Stale}
}

// maxAnswer bounds the body of an admin endpoint's answer.
const maxAnswer = 16 << 20

// AdminURL returns the base URL of a proxy's admin endpoint: addr is
// "host:port", or an http(s) URL such as https://proxy-2:22223.
func AdminURL(addr string) (string, error) {
	base := addr
	if !strings.Contains(addr, "://") {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return "", fmt.Errorf("%q: %w", addr, err)
		}
		base = "http://" + addr
	} else if !strings.HasPrefix(addr, "http://") && !strings.HasPrefix(addr, "https://") {
		return "", fmt.Errorf("%q: want host:port or an http(s) URL", addr)
	}
	if u, err := url.Parse(base); err != nil || u.Host == "" {
		return "", fmt.Errorf("%q: want host:port or an http(s) URL", addr)
	}
	return strings.TrimSuffix(base, "/"), nil
}

// InstanceHeader is the header in which a proxy's admin endpoint names
// the process that answers: an ID it draws when it starts. Two addresses
// answered by one process - a proxy listed among its own peers, as a
// template shared by a fleet lists every proxy, or one proxy under two
// names - are one process, and [Distinct] counts it once.
const InstanceHeader = "Kolco-Instance"

// Answer is what one admin endpoint said of its pools' membership, or
// why it could not be asked.
type Answer struct {
	// Addr is the endpoint as given to [Ask].
	Addr string
	// Instance is the answering process's ID (see [InstanceHeader]);
	// empty when it gave none or could not be asked.
	Instance string
	// Pools are its statuses by pool name; nil when Err is set.
	Pools map[string]PoolStatus
	Err   error
}

// Report returns the answer's report on pool, named by Addr: its status,
// or why there is none.
func (a Answer) Report(pool string) Report {
	if a.Err != nil {
		return Report{Name: a.Addr, Err: a.Err}
	}
	s, ok := a.Pools[pool]
	if !ok {
		return Report{Name: a.Addr, Err: fmt.Errorf("it runs no pool %q", pool)}
	}
	return s.Report(a.Addr)
}

// Ask asks each admin endpoint of addrs (see [AdminURL]) for its pools'
// membership, GET /v1/membership, all at once, each within timeout and
// with the bearer token unless it is empty. The answers are in the order
// of addrs; a body over 16 MiB is refused.
func Ask(ctx context.Context, addrs []string, token string, timeout time.Duration) []Answer {
	return AskWith(ctx, http.DefaultClient, addrs, token, timeout)
}

// AskWith is Ask with client, such as one that trusts the authority of
// the proxies' https endpoints.
func AskWith(ctx context.Context, client *http.Client, addrs []string, token string, timeout time.Duration) []Answer {
	out := make([]Answer, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pools, instance, err := askOne(ctx, client, addr, token, timeout)
			out[i] = Answer{Addr: addr, Instance: instance, Pools: pools, Err: err}
		}()
	}
	wg.Wait()
	return out
}

func askOne(ctx context.Context, client *http.Client, addr, token string, timeout time.Duration) (map[string]PoolStatus, string, error) {
	base, err := AdminURL(addr)
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/v1/membership", nil)
	if err != nil {
		return nil, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	instance := resp.Header.Get(InstanceHeader)
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		if json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e) == nil && e.Error != "" {
			return nil, instance, fmt.Errorf("%s: %s", resp.Status, e.Error)
		}
		return nil, instance, fmt.Errorf("%s", resp.Status)
	}
	var all []PoolStatus
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, maxAnswer)).Decode(&all); err != nil {
		return nil, instance, fmt.Errorf("its answer: %w", err)
	}
	pools := make(map[string]PoolStatus, len(all))
	for _, s := range all {
		pools[s.Pool] = s
	}
	return pools, instance, nil
}

// Distinct returns the answers of distinct processes, in order: an answer
// from self (the asking process's own instance ID; empty for none) or
// from a process that answered already under another address is left
// out, and returned in same, so that a caller can say which addresses
// were one process.
func Distinct(answers []Answer, self string) (distinct, same []Answer) {
	seen := map[string]bool{}
	if self != "" {
		seen[self] = true
	}
	for _, a := range answers {
		if a.Instance != "" && seen[a.Instance] {
			same = append(same, a)
			continue
		}
		if a.Instance != "" {
			seen[a.Instance] = true
		}
		distinct = append(distinct, a)
	}
	return distinct, same
}
