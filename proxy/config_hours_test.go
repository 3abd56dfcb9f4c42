package proxy

import (
	"errors"
	"testing"
	"time"
)

// TestMoveHours: a window within a day, one through midnight, and every
// hour; its start is in it, its end is not.
func TestMoveHours(t *testing.T) {
	at := func(hh, mm int) time.Time { return time.Date(2026, 1, 2, hh, mm, 0, 0, time.Local) }
	for _, c := range []struct {
		hours string
		in    []time.Time
		out   []time.Time
	}{
		{"", []time.Time{at(0, 0), at(12, 0), at(23, 59)}, nil},
		{"01:30-05:00", []time.Time{at(1, 30), at(4, 59)}, []time.Time{at(1, 29), at(5, 0), at(23, 0)}},
		{"22:00-06:00", []time.Time{at(22, 0), at(23, 59), at(0, 0), at(5, 59)}, []time.Time{at(6, 0), at(12, 0), at(21, 59)}},
		{"00:00-24:00", []time.Time{at(0, 0), at(23, 59)}, nil},
	} {
		t.Run(c.hours, func(t *testing.T) {
			h, err := parseHours(c.hours)
			if err != nil {
				t.Fatal(err)
			}
			for _, tm := range c.in {
				if !h.contains(tm) {
					t.Errorf("%s not in %s", tm.Format("15:04"), h)
				}
			}
			for _, tm := range c.out {
				if h.contains(tm) {
					t.Errorf("%s in %s", tm.Format("15:04"), h)
				}
			}
		})
	}
}

// TestMoveHoursRefused: what is not "HH:MM-HH:MM" is refused with
// errBadHours, and so is a store.hours in a file.
func TestMoveHoursRefused(t *testing.T) {
	for _, s := range []string{"22-06", "22:00", "22:00-", "25:00-06:00", "22:60-06:00", "24:01-01:00", "2:00-06:00", "06:00-06:00", "24:00-01:00", "aa:bb-cc:dd", "-01:00-02:00"} {
		t.Run(s, func(t *testing.T) {
			if _, err := parseHours(s); !errors.Is(err, errBadHours) {
				t.Errorf("parseHours(%q): %v, want errBadHours", s, err)
			}
		})
	}
	_, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:22121\n  redis: true\n  distribution: ring\n  store: {enabled: true, hours: \"22-06\"}\n  servers: [\"127.0.0.1:6379:1 a\"]\n"))
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Key != "store.hours" {
		t.Errorf("%v, want store.hours refused", err)
	}
}

// FuzzParseHours: any string parses to a window or errBadHours, never a
// panic; a window prints back as itself.
func FuzzParseHours(f *testing.F) {
	for _, s := range []string{
		"",            // every hour
		"22:00-06:00", // through midnight
		"01:30-05:00", // within a day
		"00:00-24:00", // the whole day
		"24:00-00:00", // starting at the day's end
		"22-06",       // no minutes
		"9:00-10:00",  // one digit
		"::-::",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := parseHours(s)
		if err != nil {
			if !errors.Is(err, errBadHours) {
				t.Fatalf("parseHours(%q): %v", s, err)
			}
			return
		}
		if !h.set {
			return
		}
		again, err := parseHours(h.String())
		if err != nil || again != h {
			t.Fatalf("%q parsed to %s, which parses to %v, %v", s, h, again, err)
		}
	})
}
