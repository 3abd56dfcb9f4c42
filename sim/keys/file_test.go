package keys

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	ks, err := Parse(strings.NewReader("# key size rate\nuser:1 4KB 10\n\n  user:2\t100\nuser:3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if ks.Len() != 3 || ks.Key(0) != "user:1" || ks.Key(2) != "user:3" {
		t.Fatalf("keys %d: %q %q", ks.Len(), ks.Key(0), ks.Key(2))
	}
	if ks.Size(0) != 4000 || ks.Size(1) != 100 || ks.Size(2) != 1 {
		t.Errorf("sizes %v", ks.Sizes)
	}
	if ks.Rate(0) != 10 || ks.Rate(1) != 1 || ks.TotalRate() != 12 {
		t.Errorf("rates %v", ks.Rates)
	}
	nbsp, err := Parse(strings.NewReader("caf\u00a0e 10\r\n\u00a0x\t2 3\n"))
	if err != nil || nbsp.Len() != 2 || nbsp.Key(0) != "caf\u00a0e" || nbsp.Size(0) != 10 || nbsp.Key(1) != "\u00a0x" || nbsp.Rate(1) != 3 {
		t.Errorf("keys holding a no-break space: %v, %d keys", err, nbsp.Len())
	}
	plain, err := Parse(strings.NewReader("a\nb\n"))
	if err != nil || plain.Sizes != nil || plain.Rates != nil || plain.TotalSize() != 2 {
		t.Errorf("plain keys: %v, sizes %v, rates %v", err, plain.Sizes, plain.Rates)
	}
}

func TestParseErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ name, in, line string }{
		{"too many fields", "a\nb 1 2 3\n", "line 2"},
		{"bad size", "a\n\n# c\nb lots\n", "line 4"},
		{"negative rate", "a 1 -5\n", "line 1"},
		{"NaN rate", "a 1\nb 1 NaN\n", "line 2"},
		{"negative size", "a -1KB\n", "line 1"},
		{"empty", "", "no keys"},
		{"only a comment", "# only a comment\n", "no keys"},
		{"over-long line", strings.Repeat("k", maxKeyLine+1), "longer than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ks, err := Parse(strings.NewReader(c.in))
			if !errors.Is(err, ErrBadFile) || !strings.Contains(err.Error(), c.line) || ks != nil {
				t.Errorf("%v, want ErrBadFile naming %q and no keys", err, c.line)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]float64{
		"0": 0, "512": 512, "4KB": 4000, "4kB": 4000, "4k": 4000, "1.5GiB": 1.5 * (1 << 30), "3TB": 3e12,
		"2MiB": 2 << 20, "7 B": 7, "1PB": 1e15,
	} {
		t.Run(in, func(t *testing.T) {
			if got, err := ParseBytes(in); err != nil || got != want {
				t.Errorf("%v, %v; want %v", got, err, want)
			}
		})
	}
	for _, in := range []string{"", "KB", "-1", "1XB", "NaN", "Inf", "1e400"} {
		t.Run("bad "+in, func(t *testing.T) {
			if _, err := ParseBytes(in); !errors.Is(err, ErrBadBytes) {
				t.Errorf("%v, want ErrBadBytes", err)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add("user:1 4KB 10\nuser:2\n")  // sizes and rates
	f.Add("# comment\n\na 1 2 3\n")   // too many fields
	f.Add("a 1GiB\nb NaN\n")          // bad size
	f.Add("a 1 1e309\n")              // rate overflow
	f.Add("\xff\xfe key 0x10 -0\r\n") // odd bytes
	f.Fuzz(func(t *testing.T, in string) {
		ks, err := Parse(strings.NewReader(in))
		if err != nil {
			if ks != nil || !errors.Is(err, ErrBadFile) {
				t.Fatalf("error %v (want ErrBadFile) with keys %v", err, ks)
			}
			return
		}
		if ks.Len() == 0 {
			t.Fatal("no error and no keys")
		}
		for i := range ks.Len() {
			if s, r := ks.Size(i), ks.Rate(i); !(s >= 0) || !(r >= 0) || math.IsInf(r, 0) {
				t.Fatalf("key %d: size %v rate %v", i, s, r)
			}
		}
	})
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"3TB", "1.5GiB", "-1", "", "1e400", "KB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		v, err := ParseBytes(in)
		if err == nil && (!(v >= 0) || math.IsInf(v, 0)) {
			t.Fatalf("%q: %v without error", in, v)
		}
	})
}

// TestParseBytesListsTheUnits: the error for a unit it does not know
// names the units it does.
func TestParseBytesListsTheUnits(t *testing.T) {
	_, err := ParseBytes("3XB")
	for _, unit := range []string{"k, M, G, T, P", "Ki, Mi, Gi, Ti, Pi", "optional B"} {
		if err == nil || !strings.Contains(err.Error(), unit) {
			t.Errorf("error %v does not list %q", err, unit)
		}
	}
}
