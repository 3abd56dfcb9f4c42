package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kolco-dev/kolco/membership"
)

// maxPeers bounds kolco.admin_peers: the status page asks each of them.
const maxPeers = 64

// peerTimeout bounds the status page's question to one peer: a peer that
// does not answer in that time is reported unreachable, and the page is
// not held up longer.
const peerTimeout = 2 * time.Second

// checkPeers checks kolco.admin_peers.
func checkPeers(g *GlobalConfig) error {
	if len(g.AdminPeers) == 0 {
		return nil
	}
	if g.AdminListen == "" {
		return errors.New("given without admin_listen")
	}
	if len(g.AdminPeers) > maxPeers {
		return fmt.Errorf("at most %d peers (got %d)", maxPeers, len(g.AdminPeers))
	}
	for _, p := range g.AdminPeers {
		if _, err := peerURL(p); err != nil {
			return err
		}
	}
	return nil
}

// peerURL returns the base URL of a peer's admin endpoint: addr is
// "host:port", or a URL such as https://proxy-2:22223.
func peerURL(addr string) (string, error) {
	if strings.Contains(addr, "://") {
		if !strings.HasPrefix(addr, "http://") && !strings.HasPrefix(addr, "https://") {
			return "", fmt.Errorf("%q: want host:port or an http(s) URL", addr)
		}
		return strings.TrimSuffix(addr, "/"), nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", fmt.Errorf("%q: %w", addr, err)
	}
	return "http://" + addr, nil
}

// peerAnswer is what a peer said, or why it could not be asked.
type peerAnswer struct {
	addr  string
	pools map[string]MembershipStatus
	err   error
}

// askPeers asks each peer for its membership statuses, all at once, each
// within peerTimeout.
func askPeers(ctx context.Context, peers []string, token []byte) []peerAnswer {
	out := make([]peerAnswer, len(peers))
	var wg sync.WaitGroup
	for i, addr := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = askPeer(ctx, addr, token)
		}()
	}
	wg.Wait()
	return out
}

func askPeer(ctx context.Context, addr string, token []byte) peerAnswer {
	a := peerAnswer{addr: addr}
	base, err := peerURL(addr)
	if err != nil {
		a.err = err
		return a
	}
	ctx, cancel := context.WithTimeout(ctx, peerTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/v1/membership", nil)
	if err != nil {
		a.err = err
		return a
	}
	if len(token) > 0 {
		req.Header.Set("Authorization", "Bearer "+string(token))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.err = err
		return a
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		a.err = fmt.Errorf("%s", resp.Status)
		return a
	}
	var all []MembershipStatus
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 16<<20)).Decode(&all); err != nil {
		a.err = fmt.Errorf("its answer: %w", err)
		return a
	}
	a.pools = make(map[string]MembershipStatus, len(all))
	for _, ms := range all {
		a.pools[ms.Pool] = ms
	}
	return a
}

// reportOf returns a membership status as a report for comparison.
func reportOf(name string, ms MembershipStatus) membership.Report {
	return membership.Report{Name: name, Fingerprint: ms.Fingerprint, Revision: ms.Revision, Since: ms.Since, Stale: ms.Stale}
}

// agreement compares the pool's status here with the peers' answers.
func agreement(self string, ms MembershipStatus, peers []peerAnswer) membership.Agreement {
	reports := []membership.Report{reportOf(self, ms)}
	for _, p := range peers {
		theirs, ok := p.pools[ms.Pool]
		switch {
		case p.err != nil:
			reports = append(reports, membership.Report{Name: p.addr, Err: p.err})
		case !ok:
			reports = append(reports, membership.Report{Name: p.addr, Err: fmt.Errorf("no pool %q", ms.Pool)})
		default:
			reports = append(reports, reportOf(p.addr, theirs))
		}
	}
	return membership.Compare(reports)
}
