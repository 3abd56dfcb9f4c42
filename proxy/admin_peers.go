package proxy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kolco-dev/kolco/fleet"
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
		if _, err := fleet.AdminURL(p); err != nil {
			return err
		}
	}
	return nil
}

// askPeers asks each peer for its membership statuses, all at once, each
// within peerTimeout.
func askPeers(ctx context.Context, peers []string, token []byte) []fleet.Answer {
	return fleet.Ask(ctx, peers, string(token), peerTimeout)
}

// agreement compares the pool's status here with the peers' answers.
func agreement(self string, ms MembershipStatus, peers []fleet.Answer) fleet.Agreement {
	reports := []fleet.Report{ms.Report(self)}
	for _, p := range peers {
		reports = append(reports, p.Report(ms.Pool))
	}
	return fleet.Compare(reports)
}
