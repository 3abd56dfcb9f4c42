package workload_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/kolco-dev/kolco/sim/workload"
)

func TestDistValues(t *testing.T) {
	for _, spec := range []string{"const", "exp", "pareto:2", "zipf:1.1", "uniform"} {
		t.Run(spec, func(t *testing.T) {
			d, err := workload.ParseDist(spec)
			if err != nil {
				t.Fatal(err)
			}
			v := d.Values(1000, 5, 1)
			sum := 0.0
			for _, x := range v {
				if !(x >= 0) || math.IsInf(x, 0) {
					t.Fatalf("value %v", x)
				}
				sum += x
			}
			if math.Abs(sum/1000-5) > 1e-9 {
				t.Errorf("mean %v, want 5", sum/1000)
			}
			again := d.Values(1000, 5, 1)
			for i := range v {
				if v[i] != again[i] {
					t.Fatalf("not reproducible")
				}
			}
		})
	}
}

func TestParseDistRefuses(t *testing.T) {
	for _, spec := range []string{"normal", "pareto:1", "zipf:x", "pareto:Inf", "zipf:-1", "zipf:100"} {
		t.Run(spec, func(t *testing.T) {
			if _, err := workload.ParseDist(spec); !errors.Is(err, workload.ErrBadDist) {
				t.Errorf("%v, want ErrBadDist", err)
			}
		})
	}
}

// TestDistString: a parsed spec prints with its parameter, defaults filled
// in, and parses back to the same distribution.
func TestDistString(t *testing.T) {
	for spec, want := range map[string]string{"": "const", "uniform": "const", "exp": "exp",
		"pareto": "pareto:1.5", "pareto:2.50": "pareto:2.5", "zipf": "zipf:1", "zipf:0.99": "zipf:0.99"} {
		t.Run(want, func(t *testing.T) {
			d, err := workload.ParseDist(spec)
			if err != nil {
				t.Fatal(err)
			}
			if d.String() != want {
				t.Errorf("%q prints as %q, want %q", spec, d, want)
			}
			if again, err := workload.ParseDist(d.String()); err != nil || again != d {
				t.Errorf("%q parses back to %v, %v", d, again, err)
			}
		})
	}
	if got := (workload.Dist{}).String(); got != "const" {
		t.Errorf("zero Dist is %q, want const", got)
	}
}

func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"const", "exp", "pareto:1.5", "zipf:1.1", "zipf:", "pareto:0", "x:y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		d, err := workload.ParseDist(spec)
		if err != nil {
			if !errors.Is(err, workload.ErrBadDist) {
				t.Fatalf("%q: %v, want ErrBadDist", spec, err)
			}
			return
		}
		for _, x := range d.Values(50, 2, 1) {
			if !(x >= 0) || math.IsInf(x, 0) {
				t.Fatalf("%q: value %v", spec, x)
			}
		}
	})
}

// Sizes with a heavy tail around a 4 kB mean: parsed once, drawn for any
// number of keys.
func ExampleParseDist() {
	d, err := workload.ParseDist("pareto:1.5")
	if err != nil {
		fmt.Println(err)
		return
	}
	sizes := d.Values(100_000, 4000, 1)
	total := 0.0
	for _, s := range sizes {
		total += s
	}
	fmt.Printf("%s: %d sizes, mean %.0f\n", d, len(sizes), total/float64(len(sizes)))
	_, err = workload.ParseDist("normal")
	fmt.Println(err)
	// Output:
	// pareto:1.5: 100000 sizes, mean 4000
	// workload: bad distribution: "normal" (want const, exp, pareto:A or zipf:S)
}
