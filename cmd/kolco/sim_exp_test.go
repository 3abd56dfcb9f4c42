package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// experiments lists a small run of every sim experiment.
var experiments = map[string][]string{
	"remap":    {"sim", "remap", "--algo", "ring,rendezvous,modulo", "--keys", "20000"},
	"remap-v":  {"sim", "remap", "--vnodes", "1,10,100", "--algo", "ring,jump", "--keys", "20000", "--sets", "2"},
	"balance":  {"sim", "balance", "--vnodes", "1,10,100", "--keys", "20000", "--sets", "3"},
	"balanceN": {"sim", "balance", "--algo", "ring,maglev", "--nodes", "5,20", "--keys", "20000"},
	"failure":  {"sim", "failure", "--algo", "ring,rendezvous", "--vnodes", "10", "--cascade", "2", "--keys", "20000"},
	"weights":  {"sim", "weights", "--algo", "ring,rendezvous", "--keys", "20000"},
	"replicas": {"sim", "replicas", "--algo", "ring,rendezvous", "--keys", "5000"},
	"lookup":   {"sim", "lookup", "--algo", "ring,jump", "--nodes", "10,100", "--keys", "2000"},
	"hotkeys":  {"sim", "hotkeys", "--algo", "ring,rendezvous", "--keys", "1000", "--requests", "20000"},
}

func TestSimExperimentsPrintTablesJSONAndCSV(t *testing.T) {
	for name, args := range experiments {
		t.Run(name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", args...)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) < 3 || !strings.HasSuffix(lines[0], ":") {
				t.Errorf("text output:\n%s", out)
			}
			code, out, errs = runCLI(t, "", append(args, "--json")...)
			var doc map[string]any
			if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc) == 0 {
				t.Errorf("--json: exit %d, %q, output %q", code, errs, out)
			}
			code, out, errs = runCLI(t, "", append(args, "--csv")...)
			r := csv.NewReader(strings.NewReader(out))
			r.FieldsPerRecord = -1
			recs, err := r.ReadAll()
			if code != 0 || err != nil || len(recs) < 2 || recs[0][0] != "table" {
				t.Errorf("--csv: exit %d, %q, parse %v, records %d", code, errs, err, len(recs))
			}
		})
	}
}

// TestSimPlotsAreValid draws every experiment's chart as SVG and PNG and
// parses the files.
func TestSimPlotsAreValid(t *testing.T) {
	dir := t.TempDir()
	for name, args := range experiments {
		for _, ext := range []string{".svg", ".png"} {
			t.Run(name+ext, func(t *testing.T) {
				file := filepath.Join(dir, name+ext)
				code, _, errs := runCLI(t, "", append(args, "--plot", file)...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errs)
				}
				checkChartFile(t, file)
			})
		}
	}
}

func checkChartFile(t *testing.T, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(file, ".png") {
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Errorf("%s: %v", file, err)
		}
		return
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("%s: root %q", file, root)
	}
}

// TestSimRemapModuloAgainstTheory: through the command, modulo moves
// N/(N+1) of the keys from 10 to 11 nodes, within 5 binomial standard
// deviations of 20 000 keys.
func TestSimRemapModuloAgainstTheory(t *testing.T) {
	code, out, errs := runCLI(t, "", "sim", "remap", "--algo", "modulo,rendezvous", "--keys", "20000", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Rows []struct {
			Algo     string  `json:"algo"`
			AvgMoved float64 `json:"avg_moved"`
			Theory   float64 `json:"theory"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"modulo": 10.0 / 11, "rendezvous": 1.0 / 11}
	for _, r := range res.Rows {
		w := want[r.Algo]
		sd := math.Sqrt(w * (1 - w) / 20000)
		if math.Abs(r.AvgMoved-w) > 5*sd || math.Abs(r.Theory-w) > 1e-12 {
			t.Errorf("%s: moved %.4f (theory %.4f), want %.4f", r.Algo, r.AvgMoved, r.Theory, w)
		}
	}
}

func TestSimUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"sim", "remap", "--algo", "nope"},
		{"sim", "remap", "--json", "--csv", "--keys", "10"},
		{"sim", "balance", "--plot", "x.gif", "--keys", "10"},
		{"sim", "balance", "--vnodes", "0"},
		{"sim", "remap", "--add", "0"},
		{"sim", "failure", "--cascade", "10"},
		{"sim", "lookup", "--nodes", "x"},
	} {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			code, out, errs := runCLI(t, "", args...)
			if code != 2 || out != "" || strings.Count(errs, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line", code, out, errs)
			}
		})
	}
}

// TestSimWeightsLeavesOutUnweighted: of algorithms with and without
// weights, sim weights runs those with, leaves the others out with one
// line on stderr, and lists them under "skipped" in --json.
func TestSimWeightsLeavesOutUnweighted(t *testing.T) {
	code, out, errs := runCLI(t, "", "sim", "weights", "--algo", "flip,binomial,power,dx", "--keys", "2000")
	if code != 0 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "left out --algo flip,binomial,power") {
		t.Fatalf("exit %d, stderr %q; want exit 0 and one line leaving out flip, binomial and power", code, errs)
	}
	if !strings.Contains(out, "dx") || strings.Contains(out, "flip") {
		t.Errorf("stdout %q: want dx's shares only", out)
	}
	code, out, _ = runCLI(t, "", "sim", "weights", "--algo", "ring,jump", "--keys", "2000", "--json")
	var res struct {
		Rows    []struct{ Setup string }
		Skipped []string
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil {
		t.Fatalf("exit %d, %v: %q", code, err, out)
	}
	if len(res.Rows) != 3 || !strings.HasPrefix(res.Rows[0].Setup, "ring") || len(res.Skipped) != 1 || res.Skipped[0] != "jump" {
		t.Errorf("--json: %+v, want the ring's three nodes and jump skipped", res)
	}
}

func TestSimNodesFileErrorNamesLine(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "nodes.txt")
	os.WriteFile(file, []byte("a 1\nb 2\nc heavy\n"), 0o644)
	plot := filepath.Join(dir, "w.svg")
	code, out, errs := runCLI(t, "", "sim", "weights", "--nodes-file", file, "--keys", "100", "--plot", plot)
	if code != 1 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "line 3") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one line naming line 3", code, out, errs)
	}
	if _, err := os.Stat(plot); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed run left %s: %v", plot, err)
	}
}

// TestSimRemoveAndArticle: --remove alone removes without adding (k/N moved
// for rendezvous), and --article runs the article's 100-point md5 ring.
func TestSimRemoveAndArticle(t *testing.T) {
	code, out, errs := runCLI(t, "", "sim", "remap", "--algo", "rendezvous", "--remove", "2", "--keys", "20000", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Add, Remove int
		Rows        []struct {
			AvgMoved float64 `json:"avg_moved"`
		}
	}
	json.Unmarshal([]byte(out), &res)
	sd := math.Sqrt(0.2 * 0.8 / 20000)
	if res.Add != 0 || res.Remove != 2 || len(res.Rows) != 1 || math.Abs(res.Rows[0].AvgMoved-0.2) > 5*sd {
		t.Errorf("remove 2 of 10: %+v, want 20%% moved", res)
	}
	code, out, _ = runCLI(t, "", "sim", "balance", "--article", "--keys", "1000")
	if code != 0 || !strings.Contains(out, "ring(V=100)") {
		t.Errorf("--article: exit %d, output %q; want the 100-point ring", code, out)
	}
}
