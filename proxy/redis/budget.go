package redis

import "fmt"

// Budget bounds the memory a [Reader] or a [ReplyReader] holds: it is asked
// for room before they hold more than a little.
type Budget interface {
	// Reserve makes room for n more bytes, or returns why there is none.
	Reserve(n int) error
}

// A BulkBudget is a Budget that is told which room is for one argument of
// over KeepMax bytes, whole, as its length is read: a proxy passes such an
// argument on by reference and holds it once, where it copies the others.
type BulkBudget interface {
	Budget
	// ReserveBulk makes room for an argument of n bytes, or returns why
	// there is none.
	ReserveBulk(n int) error
}

// A request's first freeRequest bytes are held without asking the
// Reader's Budget (a client has few requests in flight); past them the
// Reader asks for budgetStep bytes or more at a time: a bulk string whole,
// once its length is read, the rest of a long line as it comes.
const (
	freeRequest = 64 << 10
	budgetStep  = 64 << 10
)

// reserve asks the Reader's Budget for room for n more bytes of the
// request, whose arguments hold held bytes so far. It reports false when
// there is none, and records the request's error: the rest of the
// request is then read and dropped, and Read returns the error.
func (r *Reader) reserve(held, n int) bool {
	b := r.lim.Budget
	if r.noRoom != nil {
		return false
	}
	if b == nil || held+n <= r.charged+freeRequest {
		return true
	}
	step := max(held+n-r.charged-freeRequest, budgetStep)
	if err := b.Reserve(step); err != nil {
		r.noRoom = replyError(fmt.Errorf("%w: %w", ErrNoRoom, err), "OOM the proxy has no room for the request: "+err.Error(), false)
		return false
	}
	r.charged += step
	return true
}

// reserveBulk asks the Reader's Budget for room for an argument of n
// bytes whole, through ReserveBulk when it is a BulkBudget and the
// argument is over KeepMax, else as reserve does.
func (r *Reader) reserveBulk(held, n int) bool {
	bb, ok := r.lim.Budget.(BulkBudget)
	if !ok || n <= KeepMax || r.noRoom != nil {
		return r.reserve(held, n)
	}
	if err := bb.ReserveBulk(n); err != nil {
		r.noRoom = replyError(fmt.Errorf("%w: %w", ErrNoRoom, err), "OOM the proxy has no room for the request: "+err.Error(), false)
		return false
	}
	r.charged += n
	return true
}

// reserve asks the ReplyReader's Budget for room for a bulk string of n
// bytes, unless bufferedBulk asked already and was refused.
func (r *ReplyReader) reserve(n int) error {
	if err := r.noRoom; err != nil {
		r.noRoom = nil
		return err
	}
	if r.Budget == nil {
		return nil
	}
	return r.Budget.Reserve(n)
}
