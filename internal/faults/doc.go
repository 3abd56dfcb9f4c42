// Package faults checks the histories clients of a kolco proxy record
// while faults are applied to its servers and to itself. A cache's
// history is checked against [CacheModel]: a read may miss, but never
// returns a value older than one acknowledged before it began.
package faults
