//go:build amd64 && !purego

package dx

import "golang.org/x/sys/cpu"

// hasCRC reports whether the processor has SSE 4.2's crc32 instruction.
var hasCRC = cpu.X86.HasSSE42

// probeCRC runs DxHash's probe loop for the key with hash kh over slot (a
// power of two long) with the crc32q instruction, for at most limit
// probes, and returns the first slot whose node index is not negative, or
// -1 when none came up in limit probes. It is find without weights or
// chosen nodes, in probe_amd64.s.
//
//go:noescape
func probeCRC(kh uint64, slot []int32, limit int) int

// first returns the slot of the key with hash kh: find without chosen
// nodes. Without weights, on a processor with the instruction, the whole
// probe loop runs in assembly, four values at a time: one call per
// lookup, where a call per step would cost as much as the step saves; a
// key that runs past the bound goes to find, which does it all again and
// then scans.
func (s *state) first(kh uint64) int {
	if hasCRC && s.accept == nil {
		if b := probeCRC(kh, s.slot, probes*len(s.slot)); b >= 0 {
			return b
		}
	}
	return s.find(kh, nil)
}
