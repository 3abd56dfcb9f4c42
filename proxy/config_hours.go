package proxy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// moveHours is the daily window in which a store's mover runs
// (store.hours), in minutes from midnight in the proxy's time zone: from
// is in it, to is not; a window whose to comes before its from runs
// through midnight. The zero value is every hour.
type moveHours struct {
	from, to int
	set      bool
}

// errBadHours is the error of a store.hours that is not "HH:MM-HH:MM".
var errBadHours = errors.New(`want "HH:MM-HH:MM", as "22:00-06:00" (the proxy's time zone; the end is not in it)`)

// parseHours parses store.hours: "" for every hour, or "HH:MM-HH:MM".
func parseHours(s string) (moveHours, error) {
	if s == "" {
		return moveHours{}, nil
	}
	from, to, ok := strings.Cut(s, "-")
	if !ok {
		return moveHours{}, errBadHours
	}
	f, err := minuteOfDay(from)
	if err != nil {
		return moveHours{}, err
	}
	t, err := minuteOfDay(to)
	if err != nil {
		return moveHours{}, err
	}
	if f == t || f == 24*60 {
		return moveHours{}, fmt.Errorf("%w: it starts where it ends, or at the day's end", errBadHours)
	}
	return moveHours{from: f, to: t, set: true}, nil
}

// minuteOfDay parses "HH:MM", 00:00 to 24:00.
func minuteOfDay(s string) (int, error) {
	hh, mm, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || len(hh) != 2 || len(mm) != 2 {
		return 0, errBadHours
	}
	h, err1 := strconv.Atoi(hh)
	m, err2 := strconv.Atoi(mm)
	if err1 != nil || err2 != nil || h < 0 || m < 0 || m > 59 || h > 24 || h == 24 && m != 0 {
		return 0, errBadHours
	}
	return 60*h + m, nil
}

// contains reports whether t is in the window.
func (h moveHours) contains(t time.Time) bool {
	if !h.set {
		return true
	}
	m := 60*t.Hour() + t.Minute()
	if h.from < h.to {
		return h.from <= m && m < h.to
	}
	return m >= h.from || m < h.to
}

func (h moveHours) String() string {
	if !h.set {
		return "every hour"
	}
	return fmt.Sprintf("%02d:%02d-%02d:%02d", h.from/60, h.from%60, h.to/60, h.to%60)
}
