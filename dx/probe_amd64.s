//go:build amd64 && !purego

#include "textflag.h"

// func probeCRC(kh uint64, slot []int32, limit int) int
TEXT ·probeCRC(SB), NOSPLIT, $0-48
	MOVQ kh+0(FP), AX
	MOVQ slot_base+8(FP), SI
	MOVQ slot_len+16(FP), CX
	MOVQ limit+32(FP), DX
	// The second seed: the key's low 32 bits times 421757, plus one.
	IMUL3L $421757, AX, BX
	ADDL $1, BX
	// The first value: the step of the key hash from the seed.
	MOVL BX, DI
	CRC32Q AX, DI
	DECQ CX // the slot mask
	TESTQ DX, DX
	JLE none

loop:
	MOVQ DI, R8
	ANDQ CX, R8
	MOVL (SI)(R8*4), R9
	TESTL R9, R9
	JGE found
	// The next value: the step of the value from the seed.
	MOVL BX, R10
	CRC32Q DI, R10
	MOVQ R10, DI
	DECQ DX
	JNZ loop

none:
	MOVQ $-1, ret+40(FP)
	RET

found:
	MOVQ R8, ret+40(FP)
	RET
