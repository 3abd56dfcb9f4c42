//go:build amd64 && !purego

#include "textflag.h"

// func probeCRC(kh uint64, slot []int32, limit int) int
//
// Four values at a time: their slots are read together and the first
// working one chosen by conditional moves, so that only a key whose four
// slots are all inactive takes a branch that may mispredict. One at a
// time, the loop's exit mispredicted about once a lookup.
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

four:
	CMPQ DX, $4
	JLT one
	// Values 1 to 3 after DI: each the step of the one before from the seed.
	MOVL BX, R10
	CRC32Q DI, R10
	MOVL BX, R11
	CRC32Q R10, R11
	MOVL BX, R12
	CRC32Q R11, R12
	// Their slots (R8, R13, R14, R11) and node indexes (R9, AX, DI, R10).
	MOVQ DI, R8
	ANDQ CX, R8
	MOVQ R10, R13
	ANDQ CX, R13
	MOVQ R11, R14
	ANDQ CX, R14
	MOVQ R12, R11
	ANDQ CX, R11
	MOVL (SI)(R8*4), R9
	MOVL (SI)(R13*4), AX
	MOVL (SI)(R14*4), DI
	MOVL (SI)(R11*4), R10
	// The first working slot of the four, the last chosen first.
	TESTL DI, DI
	CMOVQGE R14, R11
	TESTL AX, AX
	CMOVQGE R13, R11
	TESTL R9, R9
	CMOVQGE R8, R11
	// All four inactive: every index negative.
	ANDL R9, AX
	ANDL DI, AX
	ANDL R10, AX
	JGE found4
	// The value after the fourth.
	MOVL BX, DI
	CRC32Q R12, DI
	SUBQ $4, DX
	JMP four

found4:
	MOVQ R11, ret+40(FP)
	RET

one:
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
