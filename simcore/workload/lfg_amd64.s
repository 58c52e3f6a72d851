#include "textflag.h"

// func addMasked(dst, src *int64, n int, carry uint64) uint64
//
// dst[i] = (dst[i] + src[i]) & (2^63-1) for i in [0, n), two lanes at a
// time (SSE2, which every amd64 has); returns the OR of every stored value
// plus carry (rejectCarry), whose top bit says whether any value was rejectFrom or
// more. src may trail dst by 4 or more elements in the same array.
TEXT ·addMasked(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ $0x7fffffffffffffff, AX
	MOVQ AX, X6
	PUNPCKLQDQ X6, X6
	MOVQ carry+24(FP), R8
	MOVQ R8, X7
	PUNPCKLQDQ X7, X7
	PXOR X4, X4
	PXOR X5, X5
	XORQ BX, BX

quad:
	CMPQ CX, $4
	JLT  single
	MOVOU 0(DI), X0
	MOVOU 16(DI), X1
	MOVOU 0(SI), X2
	MOVOU 16(SI), X3
	PADDQ X2, X0
	PADDQ X3, X1
	PAND  X6, X0
	PAND  X6, X1
	MOVOU X0, 0(DI)
	MOVOU X1, 16(DI)
	PADDQ X7, X0
	PADDQ X7, X1
	POR   X0, X4
	POR   X1, X5
	ADDQ  $32, DI
	ADDQ  $32, SI
	SUBQ  $4, CX
	JMP   quad

single:
	TESTQ CX, CX
	JEQ   done
	MOVQ  (DI), AX
	ADDQ  (SI), AX
	BTRQ  $63, AX
	MOVQ  AX, (DI)
	ADDQ  R8, AX
	ORQ   AX, BX
	ADDQ  $8, DI
	ADDQ  $8, SI
	DECQ  CX
	JMP   single

done:
	POR    X5, X4
	MOVQ   X4, AX
	ORQ    AX, BX
	PSRLDQ $8, X4
	MOVQ   X4, AX
	ORQ    AX, BX
	MOVQ   BX, ret+32(FP)
	RET
