#include "textflag.h"

// func addMaskedSSE2(dst, src *int64, n int, carry uint64) uint64
//
// dst[i] = (dst[i] + src[i]) & (2^63-1) for i in [0, n), two lanes at a
// time (SSE2, which every amd64 has); returns the OR of every stored value
// plus carry (rejectCarry), whose top bit says whether any value was rejectFrom or
// more. src may be ahead of dst, or trail it by 4 or more elements, in the
// same array.
TEXT ·addMaskedSSE2(SB), NOSPLIT, $0-40
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

// func addMaskedAVX2(dst, src *int64, n int, carry uint64) uint64
//
// addMaskedSSE2 four lanes at a time, four registers per iteration; src
// may be ahead of dst, or trail it by 16 or more elements.
TEXT ·addMaskedAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ $0x7fffffffffffffff, AX
	MOVQ AX, X6
	VPBROADCASTQ X6, Y6
	MOVQ carry+24(FP), R8
	MOVQ R8, X7
	VPBROADCASTQ X7, Y7
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	XORQ BX, BX

hex:
	CMPQ    CX, $16
	JLT     oct
	VMOVDQU 0(DI), Y0
	VMOVDQU 32(DI), Y1
	VMOVDQU 64(DI), Y2
	VMOVDQU 96(DI), Y3
	VPADDQ  0(SI), Y0, Y0
	VPADDQ  32(SI), Y1, Y1
	VPADDQ  64(SI), Y2, Y2
	VPADDQ  96(SI), Y3, Y3
	VPAND   Y6, Y0, Y0
	VPAND   Y6, Y1, Y1
	VPAND   Y6, Y2, Y2
	VPAND   Y6, Y3, Y3
	VMOVDQU Y0, 0(DI)
	VMOVDQU Y1, 32(DI)
	VMOVDQU Y2, 64(DI)
	VMOVDQU Y3, 96(DI)
	VPADDQ  Y7, Y0, Y0
	VPADDQ  Y7, Y1, Y1
	VPADDQ  Y7, Y2, Y2
	VPADDQ  Y7, Y3, Y3
	VPOR    Y0, Y1, Y0
	VPOR    Y2, Y3, Y2
	VPOR    Y0, Y4, Y4
	VPOR    Y2, Y5, Y5
	ADDQ    $128, DI
	ADDQ    $128, SI
	SUBQ    $16, CX
	JMP     hex

oct:
	CMPQ    CX, $8
	JLT     tail
	VMOVDQU 0(DI), Y0
	VMOVDQU 32(DI), Y1
	VPADDQ  0(SI), Y0, Y0
	VPADDQ  32(SI), Y1, Y1
	VPAND   Y6, Y0, Y0
	VPAND   Y6, Y1, Y1
	VMOVDQU Y0, 0(DI)
	VMOVDQU Y1, 32(DI)
	VPADDQ  Y7, Y0, Y0
	VPADDQ  Y7, Y1, Y1
	VPOR    Y0, Y4, Y4
	VPOR    Y1, Y5, Y5
	ADDQ    $64, DI
	ADDQ    $64, SI
	SUBQ    $8, CX
	JMP     oct

tail:
	TESTQ CX, CX
	JEQ   fold
	MOVQ  (DI), AX
	ADDQ  (SI), AX
	BTRQ  $63, AX
	MOVQ  AX, (DI)
	ADDQ  R8, AX
	ORQ   AX, BX
	ADDQ  $8, DI
	ADDQ  $8, SI
	DECQ  CX
	JMP   tail

fold:
	VPOR         Y5, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPOR         X5, X4, X4
	VMOVQ        X4, AX
	ORQ          AX, BX
	VPEXTRQ      $1, X4, AX
	ORQ          AX, BX
	VZEROUPPER
	MOVQ         BX, ret+32(FP)
	RET
