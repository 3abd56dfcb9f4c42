package proxy

import "github.com/kolco-dev/kolco/internal/bytestr"

// keyString returns key as a string without copying, for a lookup that
// only hashes it and keeps nothing: the request buffer is not reused until
// the lookup returns. Copying would cost one allocation per request.
func keyString(key []byte) string { return bytestr.String(key) }
