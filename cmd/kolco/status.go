package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco/fleet"
)

// maxStatusProxies bounds the proxies one status asks, all at once.
const maxStatusProxies = 256

// poolAgreement is status's verdict on one pool, as --json prints it.
type poolAgreement struct {
	Pool  string `json:"pool"`
	Agree bool   `json:"agree"`
	// Verdict says it in words, as a proxy's status page does (see
	// fleet.Verdict).
	Verdict     string         `json:"verdict"`
	Fingerprint string         `json:"fingerprint,omitempty"`
	Revision    int64          `json:"revision,omitempty"`
	Since       *time.Time     `json:"since,omitempty"`
	Agreeing    []string       `json:"agreeing"`
	Differing   []proxyDiffers `json:"differing,omitempty"`
	Unreachable []proxyFailed  `json:"unreachable,omitempty"`
	Stale       []string       `json:"stale,omitempty"`
	// StaleWhy is why each stale proxy's view may be behind its source,
	// as the proxy says it.
	StaleWhy map[string]string `json:"stale_why,omitempty"`
	// Same are the addresses given that were a proxy already asked under
	// another address, each as "B is A": counted once.
	Same []string `json:"same,omitempty"`
	// Down is the servers each proxy treats as down: local health, not
	// disagreement.
	Down map[string][]string `json:"down,omitempty"`
	// LocalRevisions is true for a pool on gossip, where each proxy
	// numbers the node sets it sees itself: proxies in step may differ in
	// revision, never in fingerprint.
	LocalRevisions bool `json:"local_revisions,omitempty"`
}

type proxyDiffers struct {
	Proxy       string    `json:"proxy"`
	Fingerprint string    `json:"fingerprint"`
	Revision    int64     `json:"revision"`
	Since       time.Time `json:"since"`
}

type proxyFailed struct {
	Proxy string `json:"proxy"`
	Error string `json:"error"`
}

func newStatusCmd() *cobra.Command {
	var (
		proxies         []string
		pool, tokenFile string
		tlsFiles        statusTLS
		timeout         time.Duration
		asJSON          bool
	)
	cmd := &cobra.Command{
		Use:   "status --proxy ADDR --proxy ADDR... [--pool NAME]",
		Short: "Ask a fleet of proxies whether they place keys alike",
		Long: `Ask each kolco proxy, through its admin endpoint (kolco.admin_listen), for
the fingerprint of each pool's placement, and say plainly whether they agree:
equal fingerprints place every key alike. A proxy that differs is named,
with the fingerprint and revision it places by and since when; one that does
not answer within --timeout is named too. A proxy whose view may be behind
its membership source (etcd away, say) is reported stale, with the reason it
gives: it still places as it did. Servers a proxy treats as down are its
local health, listed beside, not a disagreement. A proxy given twice, under
two addresses, is counted once. A proxy's status page words
the same comparison the same way.

The exit status is 0 when every proxy answered and all agree on every pool,
and not all of a pool's proxies are stale; 1 otherwise, with every pool at
fault named.

  $ kolco status --proxy 10.0.0.1:22223 --proxy 10.0.0.2:22223 --proxy 10.0.0.3:22223
  pool cache: all 3 proxies agree: fingerprint 3f1c9a0b7d2e4c55 at revision 42, since 2026-01-05T10:00:01Z (3 min ago)

Proxies whose admin endpoints serve https (kolco.admin_tls) are asked with
--ca-file, the authority that signs their certificates (host:port is then
https), and --cert-file and --key-file when they ask for a client
certificate.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(proxies) == 0 {
				return usagef("--proxy ADDR is required: the admin endpoints of the proxies to compare")
			}
			if len(proxies) > maxStatusProxies {
				return usagef("at most %d proxies (got %d)", maxStatusProxies, len(proxies))
			}
			if timeout <= 0 {
				return usagef("--timeout must be positive (got %v)", timeout)
			}
			all, err := askProxies(proxies, tokenFile, tlsFiles, timeout)
			if err != nil {
				return err
			}
			answers, same := fleet.Distinct(all, "")
			verdicts := compareProxies(answers, pool)
			for i := range verdicts {
				verdicts[i].Same = sameAs(same, answers)
			}
			if len(verdicts) == 0 {
				var why []string
				for _, a := range answers {
					if a.Err != nil {
						why = append(why, fmt.Sprintf("%s: %v", a.Addr, a.Err))
					}
				}
				return fmt.Errorf("no proxy answered: no pool to compare (%s)", strings.Join(why, "; "))
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(verdicts); err != nil {
					return err
				}
			} else if err := printVerdicts(cmd.OutOrStdout(), verdicts, time.Now()); err != nil {
				return err
			}
			var problems []string
			for _, v := range verdicts {
				if why := v.problem(len(answers)); why != "" {
					problems = append(problems, fmt.Sprintf("pool %q: %s", v.Pool, why))
				}
			}
			if len(problems) > 0 {
				return errors.New(strings.Join(problems, "; "))
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&proxies, "proxy", nil, "a proxy's admin endpoint, host:port or URL (repeat, or separate by commas)")
	cmd.Flags().StringVar(&pool, "pool", "", "compare this pool only (default: every pool)")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "a file holding the admin endpoints' bearer token")
	cmd.Flags().StringVar(&tlsFiles.ca, "ca-file", "", "the authority of the proxies' https certificates; host:port is then asked over https")
	cmd.Flags().StringVar(&tlsFiles.cert, "cert-file", "", "a client certificate, for proxies that ask for one (with --key-file)")
	cmd.Flags().StringVar(&tlsFiles.key, "key-file", "", "the client certificate's key")
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Second, "how long to wait for each proxy")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the verdicts as JSON")
	return cmd
}

// statusTLS are the files kolco status asks https endpoints with.
type statusTLS struct{ ca, cert, key string }

// client returns the HTTP client for the files, or the default one.
func (f statusTLS) client() (*http.Client, error) {
	if f.ca == "" && f.cert == "" && f.key == "" {
		return http.DefaultClient, nil
	}
	if (f.cert == "") != (f.key == "") {
		return nil, usagef("--cert-file and --key-file go together")
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.ca != "" {
		data, err := os.ReadFile(f.ca)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("--ca-file %s: no PEM certificate in it", f.ca)
		}
	}
	if f.cert != "" {
		kp, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			return nil, fmt.Errorf("--cert-file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{kp}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}, nil
}

// askProxies asks every proxy at once for its pools' membership.
func askProxies(addrs []string, tokenFile string, files statusTLS, timeout time.Duration) ([]fleet.Answer, error) {
	trimmed := make([]string, len(addrs))
	for i, addr := range addrs {
		if trimmed[i] = strings.TrimSpace(addr); trimmed[i] == "" {
			return nil, usagef("--proxy ADDR is required: the proxy's kolco.admin_listen")
		}
		if files.ca != "" && !strings.Contains(trimmed[i], "://") {
			trimmed[i] = "https://" + trimmed[i]
		}
	}
	token, err := readToken(tokenFile)
	if err != nil {
		return nil, err
	}
	client, err := files.client()
	if err != nil {
		return nil, err
	}
	return fleet.AskWith(context.Background(), client, trimmed, token, timeout), nil
}

// compareProxies compares the answers pool by pool: pool alone, or every
// pool any proxy named.
func compareProxies(answers []fleet.Answer, pool string) []poolAgreement {
	var names []string
	for _, a := range answers {
		for name := range a.Pools {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	if pool != "" {
		names = []string{pool}
	}
	var out []poolAgreement
	for _, name := range names {
		reports := make([]fleet.Report, 0, len(answers))
		down, why := map[string][]string{}, map[string]string{}
		local := false
		for _, a := range answers {
			r := a.Report(name)
			reports = append(reports, r)
			if pm := a.Pools[name]; r.Err == nil && len(pm.Down) > 0 {
				down[a.Addr] = pm.Down
			}
			if pm := a.Pools[name]; r.Err == nil && pm.Stale && pm.Error != "" {
				why[a.Addr] = pm.Error
			}
			local = local || a.Pools[name].Gossip != nil
		}
		v := verdictOf(name, fleet.Compare(reports), down)
		if len(why) > 0 {
			v.StaleWhy = why
		}
		v.LocalRevisions = local
		out = append(out, v)
	}
	return out
}

func verdictOf(pool string, a fleet.Agreement, down map[string][]string) poolAgreement {
	v := poolAgreement{Pool: pool, Agree: a.Agree(), Verdict: a.Verdict().Text, Fingerprint: a.Fingerprint, Revision: a.Revision,
		Agreeing: a.Agreeing, Stale: a.Stale}
	if len(down) > 0 {
		v.Down = down
	}
	if !a.Since.IsZero() {
		v.Since = &a.Since
	}
	if v.Agreeing == nil {
		v.Agreeing = []string{}
	}
	for _, d := range a.Differing {
		v.Differing = append(v.Differing, proxyDiffers{Proxy: d.Name, Fingerprint: d.Fingerprint, Revision: d.Revision, Since: d.Since})
	}
	for _, u := range a.Unreachable {
		v.Unreachable = append(v.Unreachable, proxyFailed{Proxy: u.Name, Error: u.Err.Error()})
	}
	return v
}

// printVerdicts says, a pool at a time, whether the proxies agree, and
// names each one that differs, did not answer, or may be behind (and
// why), and each address given that was a proxy already asked.
func printVerdicts(w io.Writer, verdicts []poolAgreement, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, v := range verdicts {
		ref := "no fingerprint"
		if v.Fingerprint != "" {
			ref = fmt.Sprintf("fingerprint %s at revision %d", v.Fingerprint, v.Revision)
			if v.LocalRevisions {
				ref = fmt.Sprintf("fingerprint %s (over gossip each proxy numbers its own revisions)", v.Fingerprint)
			}
			if v.Since != nil {
				ref += ", since " + when(*v.Since, now)
			}
		}
		fmt.Fprintf(tw, "pool %s: %s: %s\n", v.Pool, v.Verdict, ref)
		for _, d := range v.Differing {
			fmt.Fprintf(tw, "  %s\tdiffers: fingerprint %s at revision %d, since %s\n", d.Proxy, d.Fingerprint, d.Revision, when(d.Since, now))
		}
		for _, u := range v.Unreachable {
			fmt.Fprintf(tw, "  %s\tdid not answer: %s\n", u.Proxy, u.Error)
		}
		for _, s := range v.Stale {
			why := "its view may be behind its membership source (it still places as shown)"
			if w := v.StaleWhy[s]; w != "" {
				why += ": " + w
			}
			fmt.Fprintf(tw, "  %s\tstale: %s\n", s, why)
		}
		for _, s := range v.Same {
			fmt.Fprintf(tw, "  %s\t(counted once)\n", s)
		}
		for _, p := range slices.Sorted(maps.Keys(v.Down)) {
			fmt.Fprintf(tw, "  %s\ttreats as down: %s (local health, not in the fingerprint)\n", p, strings.Join(v.Down[p], ", "))
		}
	}
	return tw.Flush()
}

// sameAs says what each answer of same was: "B is A", A the address
// given first for the same proxy.
func sameAs(same, distinct []fleet.Answer) []string {
	var out []string
	for _, a := range same {
		for _, d := range distinct {
			if d.Instance == a.Instance {
				out = append(out, fmt.Sprintf("%s is %s", a.Addr, d.Addr))
				break
			}
		}
	}
	return out
}

// problem says why v is not a fleet in step, or "" when it is: proxies
// that differ, proxies that did not answer (agreement unknown), or every
// proxy that answered stale, when nothing confirms that the placement
// they agree on is the source's.
func (v poolAgreement) problem(n int) string {
	answered := n - len(v.Unreachable)
	switch {
	case len(v.Differing) > 0:
		return "the proxies do not agree"
	case len(v.Unreachable) > 0:
		return fmt.Sprintf("agreement unknown: %d of %d proxies did not answer", len(v.Unreachable), n)
	case answered > 0 && len(v.Stale) == answered:
		why := "every proxy is stale: their view may be behind the membership source"
		for _, p := range v.Stale {
			if w := v.StaleWhy[p]; w != "" {
				why += fmt.Sprintf(" (%s: %s)", p, w)
				break
			}
		}
		return why
	case !v.Agree:
		return "agreement unknown"
	}
	return ""
}

// when writes t with its age at now.
func when(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	age := now.Sub(t).Round(time.Second)
	switch {
	case age < 0:
		return t.UTC().Format(time.RFC3339)
	case age < 90*time.Second:
		return fmt.Sprintf("%s (%d s ago)", t.UTC().Format(time.RFC3339), int(age.Seconds()))
	case age < 90*time.Minute:
		return fmt.Sprintf("%s (%d min ago)", t.UTC().Format(time.RFC3339), int(age.Minutes()))
	}
	return fmt.Sprintf("%s (%.1f h ago)", t.UTC().Format(time.RFC3339), age.Hours())
}
