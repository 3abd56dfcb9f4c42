package proxy

import (
	"context"
	"testing"
	"time"
)

// TestMigrateRolesNoCrossing: while A migrates to B, a MIGRATE from B to
// A, or from B to C (B would be source and target at once), waits; one
// from A to C, or from D to B, runs beside it; the waiting one runs once
// A's MIGRATE ends, and a deadline ends the wait with an error.
func TestMigrateRolesNoCrossing(t *testing.T) {
	r := newMigrateRoles()
	ctx := context.Background()
	if err := r.acquire(ctx, time.Time{}, "A", "B"); err != nil {
		t.Fatal(err)
	}
	soon := time.Now().Add(50 * time.Millisecond)
	for _, pair := range [][2]string{{"A", "C"}, {"D", "B"}} {
		if err := r.acquire(ctx, soon, pair[0], pair[1]); err != nil {
			t.Errorf("%s -> %s beside A -> B: %v", pair[0], pair[1], err)
		}
		r.release(pair[0], pair[1])
	}
	for _, pair := range [][2]string{{"B", "A"}, {"B", "C"}, {"C", "A"}} {
		if err := r.acquire(ctx, time.Now().Add(20*time.Millisecond), pair[0], pair[1]); err == nil {
			t.Errorf("%s -> %s ran beside A -> B", pair[0], pair[1])
			r.release(pair[0], pair[1])
		}
	}
	got := make(chan error, 1)
	go func() { got <- r.acquire(ctx, time.Now().Add(5*time.Second), "B", "A") }()
	time.Sleep(20 * time.Millisecond)
	r.release("A", "B")
	if err := <-got; err != nil {
		t.Fatalf("B -> A after A -> B ended: %v", err)
	}
	r.release("B", "A")
	if len(r.role) != 0 {
		t.Errorf("roles left after every MIGRATE ended: %v", r.role)
	}
}
