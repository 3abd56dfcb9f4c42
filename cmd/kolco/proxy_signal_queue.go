package main

import (
	"os"
	"os/signal"
	"slices"
	"syscall"
)

// signalQueueMost bounds the signals a queue keeps while its loop is busy:
// past it, a signal of a kind already waiting is not kept again.
const signalQueueMost = 64

// queueSignals relays the signals sigs, as they come, to the channel it
// returns, keeping each until the loop takes it. signal.Notify drops a
// signal its channel has no room for, and the proxy's loop takes the next
// signal only after the last one's work: a SIGHUP's reload that waits on a
// slow server, with a second SIGHUP in the channel, lost the SIGUSR2 that
// came next, and the operator's handover never began. A SIGHUP already
// waiting is not kept twice (one reload reads the file as it then is);
// every other signal is kept in order, each counting (SIGTTIN raises the
// level once for each). stop ends the relay and the notification.
func queueSignals(sigs ...os.Signal) (taken <-chan os.Signal, stop func()) {
	in := make(chan os.Signal, len(sigs))
	signal.Notify(in, sigs...)
	out := make(chan os.Signal)
	done := make(chan struct{})
	go func() {
		var waiting []os.Signal
		for {
			var next os.Signal
			var send chan os.Signal
			if len(waiting) > 0 {
				next, send = waiting[0], out
			}
			select {
			case got := <-in:
				again := slices.Contains(waiting, got)
				if !again || (got != syscall.SIGHUP && len(waiting) < signalQueueMost) {
					waiting = append(waiting, got)
				}
			case send <- next:
				waiting = waiting[1:]
			case <-done:
				return
			}
		}
	}()
	return out, func() {
		signal.Stop(in)
		close(done)
	}
}
