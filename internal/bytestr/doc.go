// Package bytestr views a string as bytes and bytes as a string without
// copying, so that a lookup taking a string can hash with a function taking
// bytes (and the reverse) without an allocation per key.
//
// The zero-copy versions use package unsafe; building with the purego tag
// selects portable twins that copy, and [Copies] says which build this is,
// so that allocation tests can allow for it. Both are tested by the same
// tests (`go test -tags purego ./internal/bytestr`).
package bytestr
