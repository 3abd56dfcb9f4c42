package gossip

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/kolco-dev/kolco/membership"
)

// ParseKeys reads a key file: one base64 key a line (16, 24 or 32 bytes
// once decoded: AES-128, -192 or -256), the first the one this member
// encrypts with, the others only accepted, so that a key is rotated by
// adding the new one second everywhere, then moving it first, then
// dropping the old. Blank lines and lines starting with # are skipped.
// The error wraps [membership.ErrBadConfig] and names the line; it never
// quotes a key.
func ParseKeys(data []byte) ([][]byte, error) {
	var keys [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1024), 64<<10)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		key, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("%w: gossip keys, line %d: not base64", membership.ErrBadConfig, line)
		}
		if err := checkKey(key); err != nil {
			return nil, fmt.Errorf("%w: gossip keys, line %d: %w", membership.ErrBadConfig, line, err)
		}
		keys = append(keys, key)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: gossip keys: %w", membership.ErrBadConfig, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: gossip keys: no key in the file", membership.ErrBadConfig)
	}
	return keys, nil
}

// checkKey checks an AES key's length.
func checkKey(key []byte) error {
	switch len(key) {
	case 16, 24, 32:
		return nil
	}
	return fmt.Errorf("a key of %d bytes: want 16, 24 or 32", len(key))
}
