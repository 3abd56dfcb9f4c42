//go:build !amd64 || purego

package dx

// first returns the slot of the key with hash kh: find without chosen
// nodes. probe_amd64.s runs it with the crc32q instruction.
func (s *state) first(kh uint64) int { return s.find(kh, nil) }
