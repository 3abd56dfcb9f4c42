package main

import (
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco/proxy"
)

func newProxyMoveCmd() *cobra.Command {
	var addr, tokenFile string
	cmd := &cobra.Command{
		Use:   "move pause|resume|status POOL --proxy ADDR",
		Short: "Pause, resume or show a Redis store's move of its keys",
		Long: `A Redis store (store: {enabled: true}) moves the keys a change gives other
servers while it serves. Ask a running proxy, through its admin endpoint
(kolco.admin_listen), how the move of POOL goes, or pause its mover and let
it go on: requests still move their own keys while it is paused. A pause
is kept in the state file, so that it holds across a restart of the proxy
and a change that comes before the move ended, until resume.

  $ kolco proxy move status sessions --proxy 127.0.0.1:22223
  sessions: moving, 12000 of about 40000 keys moved (310 by requests), 9000 keys/s, about 3 s left
  $ kolco proxy move pause sessions --proxy 127.0.0.1:22223
  sessions: paused, 12400 of about 40000 keys moved (320 by requests)`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("want two arguments, pause, resume or status and the pool's name (got %d); see 'kolco proxy move --help'", len(args))
			}
			action, pool := args[0], args[1]
			if action != "pause" && action != "resume" && action != "status" {
				return usagef("move %q: want pause, resume or status", action)
			}
			c, err := newAdminClient(addr, tokenFile)
			if err != nil {
				return err
			}
			path := "/v1/pools/" + url.PathEscape(pool)
			if action == "status" {
				var ps proxy.PoolStatus
				if err := c.get(path, &ps); err != nil {
					return err
				}
				return printMove(cmd.OutOrStdout(), pool, ps.Move, ps.LastMove)
			}
			var ms *proxy.MoveStatus
			if err := c.post(path+"/move/"+action, &ms); err != nil {
				return err
			}
			if ms == nil {
				// The move ended between the action and its answer
				// (null): what the pool says now, its last move.
				var ps proxy.PoolStatus
				if err := c.get(path, &ps); err != nil {
					return err
				}
				return printMove(cmd.OutOrStdout(), pool, ps.Move, ps.LastMove)
			}
			return printMove(cmd.OutOrStdout(), pool, ms, nil)
		},
	}
	cmd.Flags().StringVar(&addr, "proxy", "", "the proxy's admin endpoint, host:port")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "a file holding the admin endpoint's bearer token")
	return cmd
}

// printMove prints a pool's move under way, or the last one that ended.
func printMove(w io.Writer, pool string, m *proxy.MoveStatus, last *proxy.LastMove) error {
	switch {
	case m != nil:
		line := fmt.Sprintf("%s: %s", pool, m.State)
		if m.Waiting != "" {
			line += " (" + m.Waiting + ")"
		}
		line += fmt.Sprintf(", %d of about %d keys moved (%d by requests)", m.Moved+m.MovedByRequests, m.ToMove, m.MovedByRequests)
		if m.State == "moving" {
			line += fmt.Sprintf(", %.0f keys/s", m.Rate)
			if m.ETA >= 0 {
				line += fmt.Sprintf(", about %.0f s left", m.ETA)
			}
		}
		if m.LastError != "" {
			line += "; last error: " + m.LastError
		}
		_, err := fmt.Fprintln(w, line)
		return err
	case last != nil:
		line := fmt.Sprintf("%s: no move under way; the last ended %s: %d keys in %.1f s", pool, last.Ended.Format(time.RFC3339), last.Keys, last.TookSeconds)
		if last.PredictedSeconds > 0 {
			line += fmt.Sprintf(" (the mover %.1f s, predicted %.1f s)", last.MovedSeconds, last.PredictedSeconds)
		}
		for _, r := range last.Restarted {
			line += fmt.Sprintf("; %s started again while keys moved (it held %d keys when the move began, %d now): those it held or received before are gone unless it kept them on disk",
				r.Addr, r.Held, r.Holds)
		}
		_, err := fmt.Fprintln(w, line)
		return err
	}
	_, err := fmt.Fprintf(w, "%s: no move under way\n", pool)
	return err
}

// measuredMoveRate returns the keys a second the busiest server of the
// last move of pool (the proxy's only pool when "") sent, as the proxy at
// addr measured it.
func measuredMoveRate(addr, pool string) (float64, error) {
	c, err := newAdminClient(addr, "")
	if err != nil {
		return 0, err
	}
	if pool, err = c.pool(pool); err != nil {
		return 0, err
	}
	var ps proxy.PoolStatus
	if err := c.get("/v1/pools/"+url.PathEscape(pool), &ps); err != nil {
		return 0, err
	}
	if ps.LastMove == nil || ps.LastMove.ServerKeysPerSecond <= 0 {
		return 0, fmt.Errorf("--move-rate-from %s: pool %s has no move that ended since the proxy started: give --move-rate", addr, pool)
	}
	return ps.LastMove.ServerKeysPerSecond, nil
}
