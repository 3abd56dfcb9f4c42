package membership

import (
	"context"
	"time"
)

// Stepper takes over a File's waits so that a test decides when each one
// ends: the polling loop announces every wait on Waits, with its length,
// and blocks until the test calls Release.
type Stepper struct {
	Waits   chan time.Duration
	release chan struct{}
}

// Step makes f wait on a new Stepper.
func Step(f *File) *Stepper {
	s := &Stepper{Waits: make(chan time.Duration), release: make(chan struct{})}
	f.wait = func(ctx context.Context, d time.Duration) error {
		select {
		case s.Waits <- d:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case <-s.release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s
}

// Release ends the wait announced last.
func (s *Stepper) Release() { s.release <- struct{}{} }

// NextRetry is p's wait after a failure that follows one waited last.
func NextRetry(p Poll, last time.Duration) time.Duration { return p.nextRetry(last) }
