package faults

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/kolco-dev/kolco/internal/storecheck"
)

// TestFinalReadsFollowEveryRequest: a write of unknown outcome sent after
// the last answered request may be what a final read finds, and the
// history is linearizable. Final reads placed after the last answer only
// came before that write was sent.
func TestFinalReadsFollowEveryRequest(t *testing.T) {
	const never = int64(1 << 62)
	history := []porcupine.Operation{
		{ClientId: 0, Input: storecheck.Input{Op: "SET", Key: "k", Arg: "1"}, Output: storecheck.Output{}, Call: 10, Return: 20},
		{ClientId: 1, Input: storecheck.Input{Op: "SET", Key: "k", Arg: "2"}, Output: storecheck.Output{Unknown: true}, Call: 30, Return: never},
	}
	at := afterEvery(history)
	history = append(history, porcupine.Operation{ClientId: 1 << 20, Input: storecheck.Input{Op: "GET", Key: "k"},
		Output: storecheck.Output{Val: "2"}, Call: at + 1, Return: at + 2})
	if r := porcupine.CheckOperationsTimeout(storecheck.Model.ToModel(), history, 10*time.Second); r != porcupine.Ok {
		t.Errorf("final read after %d: %v, want linearizable", at, r)
	}
}
