//go:build !linux

package main

import "syscall"

// dieOf does nothing where the signal's default action cannot be restored
// from Go: dumpCore then exits with 128 plus the signal's number, as a
// shell reports a death by it.
func dieOf(syscall.Signal) {}
