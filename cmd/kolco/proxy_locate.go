package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// adminClient asks a running proxy's admin endpoint.
type adminClient struct {
	base  string // http://host:port
	token string
	http  *http.Client
}

func newAdminClient(addr, tokenFile string) (*adminClient, error) {
	if addr == "" {
		return nil, usagef("--proxy ADDR is required: the proxy's kolco.admin_listen")
	}
	c := &adminClient{base: "http://" + addr, http: &http.Client{Timeout: 10 * time.Second}}
	if strings.Contains(addr, "://") {
		c.base = strings.TrimSuffix(addr, "/")
	}
	token, err := readToken(tokenFile)
	if err != nil {
		return nil, err
	}
	c.token = token
	return c, nil
}

// readToken returns the admin token on the first line of tokenFile, or
// "" when no file is given.
func readToken(tokenFile string) (string, error) {
	if tokenFile == "" {
		return "", nil
	}
	data, err := os.ReadFile(tokenFile)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(line), nil
}

// get decodes the JSON at path into v.
func (c *adminClient) get(path string, v any) error {
	req, err := http.NewRequest("GET", c.base+path, nil)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("%s: %s: %s", c.base+path, resp.Status, e.Error)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// post posts to path and decodes the JSON answer into v.
func (c *adminClient) post(path string, v any) error {
	req, err := http.NewRequest("POST", c.base+path, nil)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("%s: %s: %s", c.base+path, resp.Status, e.Error)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// pool returns name, or the proxy's only pool when name is empty.
func (c *adminClient) pool(name string) (string, error) {
	if name != "" {
		return name, nil
	}
	var pools []struct{ Name string }
	if err := c.get("/v1/pools", &pools); err != nil {
		return "", err
	}
	if len(pools) == 1 {
		return pools[0].Name, nil
	}
	var names []string
	for _, p := range pools {
		names = append(names, p.Name)
	}
	return "", usagef("the proxy runs %d pools; name one with --pool (%s)", len(pools), strings.Join(names, ", "))
}

func newProxyLocateCmd() *cobra.Command {
	var (
		addr, pool, tokenFile string
		asJSON                bool
	)
	cmd := &cobra.Command{
		Use:   "locate --proxy ADDR [--pool NAME] [KEY...]",
		Short: "Ask a running proxy which server holds each key",
		Long: `Ask a running kolco proxy, through its admin endpoint (kolco.admin_listen),
which server holds each key under the placement it uses now - its
configuration as loaded, and its servers' health - rather than recompute it
from a file that may differ. Keys are the arguments, or stdin lines when
there are none. Each line is "key<TAB>server", with replicas the server of
each copy in preference order; --json prints where reads go and whether
each server is up.

  $ kolco proxy locate --proxy 127.0.0.1:22223 user:1 user:2
  user:1	cache-a
  user:2	cache-c`,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newAdminClient(addr, tokenFile)
			if err != nil {
				return err
			}
			if pool, err = c.pool(pool); err != nil {
				return err
			}
			if len(args) == 0 {
				if args, err = readKeys(cmd.InOrStdin()); err != nil {
					return err
				}
			}
			return locateAt(c, pool, args, asJSON, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&addr, "proxy", "", "the proxy's admin endpoint, host:port")
	cmd.Flags().StringVar(&pool, "pool", "", "the pool (default: the proxy's only pool)")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "a file holding the admin endpoint's bearer token")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the locations as JSON")
	return cmd
}

// readKeys reads keys, one per line, a trailing CR dropped.
func readKeys(r io.Reader) ([]string, error) {
	var keys []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxKeyLine)
	for sc.Scan() {
		keys = append(keys, strings.TrimSuffix(sc.Text(), "\r"))
	}
	if len(keys) == 0 && sc.Err() == nil {
		return nil, usagef("no keys: give them as arguments or on stdin")
	}
	return keys, sc.Err()
}

// location is what locate prints of the admin endpoint's answer for a key
// (proxy.Location): the command reads the JSON, not the proxy's types.
type location struct {
	Servers []struct{ Name string }
}

// locateAt asks the proxy where keys live, a batch at a time, and prints
// the answers: as the proxy sent them with asJSON, else a line per key.
func locateAt(c *adminClient, pool string, keys []string, asJSON bool, w io.Writer) error {
	var all []json.RawMessage
	for rest := keys; len(rest) > 0; {
		n := min(len(rest), 200)
		q := url.Values{"key": rest[:n]}
		var locs []json.RawMessage
		if err := c.get("/v1/pools/"+url.PathEscape(pool)+"/locate?"+q.Encode(), &locs); err != nil {
			return err
		}
		if len(locs) != n {
			return errors.New("the proxy answered for another number of keys")
		}
		all = append(all, locs...)
		rest = rest[n:]
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(all)
	}
	bw := bufio.NewWriter(w)
	for i, raw := range all {
		var loc location
		if err := json.Unmarshal(raw, &loc); err != nil {
			return err
		}
		bw.WriteString(keys[i]) // as given, whatever JSON did to it
		for _, s := range loc.Servers {
			bw.WriteString("\t" + s.Name)
		}
		if len(loc.Servers) == 0 {
			bw.WriteString("\t(no live server)")
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

func newProxyPoolsCmd() *cobra.Command {
	var addr, tokenFile string
	cmd := &cobra.Command{
		Use:   "pools --proxy ADDR",
		Short: "Print a running proxy's pools: servers, up or down, shares of keys",
		Long: `Print, as JSON, the pools a running kolco proxy serves, through its admin
endpoint: each pool's placement and servers, each server up or down and the
share of the pool's keys it holds under the placement in use.

  $ kolco proxy pools --proxy 127.0.0.1:22223`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newAdminClient(addr, tokenFile)
			if err != nil {
				return err
			}
			var pools json.RawMessage
			if err := c.get("/v1/pools", &pools); err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(pools)
		},
	}
	cmd.Flags().StringVar(&addr, "proxy", "", "the proxy's admin endpoint, host:port")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "a file holding the admin endpoint's bearer token")
	return cmd
}

func newProxyRejoinCmd() *cobra.Command {
	var addr, pool, server, tokenFile string
	cmd := &cobra.Command{
		Use:   "rejoin --proxy ADDR [--pool NAME] --server NAME",
		Short: "Let a down server whose outage journal overflowed rejoin, once you emptied it",
		Long: `While a server is down, a pool under rehash (or with replicas) notes the
keys written elsewhere, up to its outage_journal, and settles exactly those
when the server returns. Past that many, what the server missed is unknown:
a server marked exclusive is emptied, any other stays down, since its
copies may be older than what the pool serves. Empty it yourself (for
memcached, flush_all; for Redis, as your data allows), then tell the
proxy, through its admin endpoint: the server rejoins at its next
successful probe.

  $ kolco proxy rejoin --proxy 127.0.0.1:22223 --pool alpha --server mc-3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if server == "" {
				return usagef("--server NAME is required: the down server, by its name in the pool")
			}
			c, err := newAdminClient(addr, tokenFile)
			if err != nil {
				return err
			}
			if pool, err = c.pool(pool); err != nil {
				return err
			}
			var answer struct{ Rejoin string }
			if err := c.post("/v1/pools/"+url.PathEscape(pool)+"/servers/"+url.PathEscape(server)+"/rejoin", &answer); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s rejoins pool %s %s\n", server, pool, answer.Rejoin)
			return err
		},
	}
	cmd.Flags().StringVar(&addr, "proxy", "", "the proxy's admin endpoint, host:port")
	cmd.Flags().StringVar(&pool, "pool", "", "the pool (default: the proxy's only pool)")
	cmd.Flags().StringVar(&server, "server", "", "the down server, by its name in the pool")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "a file holding the admin endpoint's bearer token")
	return cmd
}
