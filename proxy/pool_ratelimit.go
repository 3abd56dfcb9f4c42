package proxy

import (
	"sync"
	"time"
)

// logEvery is the shortest interval between two log lines of one kind for
// one server or pool: a server that fails every request, or a flood of
// refused clients, is a line every few seconds that says how many it
// stands for, rather than a line per event.
const logEvery = 5 * time.Second

// logLimit lets a line of one kind be logged at most once per logEvery.
type logLimit struct {
	// mu guards the fields below.
	mu      sync.Mutex
	next    time.Time
	dropped int
}

// allow reports whether a line may be logged now and, if so, how many
// were held back since the last one.
func (l *logLimit) allow() (bool, int) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Before(l.next) {
		l.dropped++
		return false, 0
	}
	n := l.dropped
	l.next, l.dropped = now.Add(logEvery), 0
	return true, n
}
