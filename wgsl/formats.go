package wgsl

import (
	"fmt"
	"math/bits"
	"strings"
)

// Format is the storage format of an operand, as the kernels see it.
type Format int

// Formats the kernels can read (and, for F32, F16, BF16 and I32, write).
const (
	F32 Format = iota
	F16
	I32
	I64 // read only; values outside the i32 range read as -1
	// Quantized weight formats (read only, eight elements at a time: see quantFormats).
	Q8_0
	Q4_0
	Q4_1
	Q5_0
	Q5_1
	// k-quants: super-blocks of 256 elements.
	Q4_K
	Q6_K
	Q5_K
	Q2_K
	Q3_K
	// Plain bfloat16, read and written like F16 (bf16.go).
	BF16
	// The IQ formats (their lookup tables: iq_tables.go), IQ4_NL in blocks of 32, the
	// others of 256.
	IQ4_NL
	IQ4_XS
	IQ2_XXS
	IQ2_XS
	IQ2_S
	IQ3_XXS
	IQ3_S
	IQ1_S
	IQ1_M
	// FP4 (blocks of 32 and 64), ternary (256) and 1- and 2-bit (128, 64) formats.
	MXFP4
	NVFP4
	TQ1_0
	TQ2_0
	Q1_0
	Q2_0
)

func (f Format) String() string {
	if q, ok := quantFormats[f]; ok {
		return q.name
	}
	if q, ok := quantWriters[f]; ok {
		return q.name
	}
	switch f {
	case F32:
		return "f32"
	case F16:
		return "f16"
	case I32:
		return "i32"
	case I64:
		return "i64"
	case BF16:
		return "bf16"
	}
	return fmt.Sprintf("format(%d)", int(f))
}

// OffsetUnit is the unit, in bytes, of an operand's first-element offset (the generated
// `<operand>_off` parameter): the element size, or one byte for a quantized format, whose
// blocks may start anywhere.
func (f Format) OffsetUnit() int {
	if f.Quantized() || f.Writable() {
		return 1
	}
	switch f {
	case F16, BF16:
		return 2
	case I64:
		return 8
	}
	return 4
}

// storageDecl begins the declaration of an operand's storage binding, up to its type:
// read_write, or read for a read-only binding (Operand.ReadOnly).
func storageDecl(name string, binding int, readOnly bool) string {
	access := "read_write"
	if readOnly {
		access = "read"
	}
	return fmt.Sprintf("@group(0) @binding(%d) var<storage, %s> %s: ", binding, access, name)
}

// accessors declares the binding of an operand and the functions that read and write its
// elements. Indices are element indices relative to the operand's first element.
func (f Format) accessors(name string, binding int, written, readOnly bool) string {
	decl := storageDecl(name, binding, readOnly)
	switch f {
	case F32:
		s := decl + "array<f32>;\n" +
			fmt.Sprintf("fn %[1]s_get(i: u32) -> f32 { return %[1]s[p.%[1]s_off + i]; }\n", name)
		if written {
			s += fmt.Sprintf("fn %[1]s_set(i: u32, v: f32) { %[1]s[p.%[1]s_off + i] = v; }\n", name)
		}
		return s
	case I32:
		s := decl + "array<i32>;\n" +
			fmt.Sprintf("fn %[1]s_geti(i: u32) -> i32 { return %[1]s[p.%[1]s_off + i]; }\n", name)
		if written {
			s += fmt.Sprintf("fn %[1]s_seti(i: u32, v: i32) { %[1]s[p.%[1]s_off + i] = v; }\n", name)
		}
		return s
	case I64:
		// A value outside the i32 range reads as -1, which every index check rejects.
		return decl + "array<i32>;\n" + fmt.Sprintf(
			"fn %[1]s_geti(i: u32) -> i32 {\n"+
				"  let e = 2u * (p.%[1]s_off + i); let lo = %[1]s[e];\n"+
				"  return select(-1, lo, %[1]s[e + 1u] == select(0, -1, lo < 0));\n}\n", name)
	case F16:
		// Two halves per u32 word. Written f16 operands are atomic so that neighbouring
		// halves stored by different invocations do not clobber each other.
		if !written {
			return decl + "array<u32>;\n" + fmt.Sprintf(
				"fn %[1]s_get(i: u32) -> f32 { let e = p.%[1]s_off + i; return half2(%[1]s[e >> 1u])[e & 1u]; }\n", name)
		}
		return decl + "array<atomic<u32>>;\n" + fmt.Sprintf(
			"fn %[1]s_get(i: u32) -> f32 { let e = p.%[1]s_off + i; return half2(atomicLoad(&%[1]s[e >> 1u]))[e & 1u]; }\n"+
				"fn %[1]s_set(i: u32, v: f32) {\n"+
				"  let e = p.%[1]s_off + i; let sh = (e & 1u) * 16u;\n"+
				"  let h = pack2x16float(vec2<f32>(v, 0.0)) & 0xffffu;\n"+
				"  atomicAnd(&%[1]s[e >> 1u], ~(0xffffu << sh));\n"+
				"  atomicOr(&%[1]s[e >> 1u], h << sh);\n}\n", name)
	case BF16:
		return bf16Accessors(decl, name, written)
	}
	panic("wgsl: unknown format")
}

// vecAccessors declares a read-only operand as 16-byte vectors and NAME_get8(i), which
// returns elements i..i+7 as the two columns of a mat2x4<f32>; a quantized operand is
// declared as words and dequantized by its format's routine.
func (f Format) vecAccessors(name string, binding int, readOnly bool) (string, error) {
	if q, ok := quantFormats[f]; ok {
		return q.accessors(name, binding, readOnly), nil
	}
	decl := storageDecl(name, binding, readOnly)
	switch f {
	case F32:
		return decl + "array<vec4<f32>>;\n" + fmt.Sprintf(
			"fn %[1]s_get8(i: u32) -> mat2x4<f32> { let e = (p.%[1]s_off + i) >> 2u; return mat2x4<f32>(%[1]s[e], %[1]s[e + 1u]); }\n", name), nil
	case F16:
		return decl + "array<vec4<u32>>;\n" + fmt.Sprintf(
			"fn %[1]s_get8(i: u32) -> mat2x4<f32> {\n"+
				"  let w = %[1]s[(p.%[1]s_off + i) >> 3u];\n"+
				"  return half8(w);\n}\n", name), nil
	case BF16:
		return bf16VecAccessors(decl, name), nil
	case I32:
		// packed integers: NAME_get4i(i), elements i..i+3 (i and the first element
		// multiples of 4), through one 16-byte load
		return decl + "array<vec4<i32>>;\n" + fmt.Sprintf(
			"fn %[1]s_get4i(i: u32) -> vec4<i32> { return %[1]s[(p.%[1]s_off + i) >> 2u]; }\n", name), nil
	}
	return "", fmt.Errorf("wgsl: no vector access for %s", f)
}

// Quantized reports whether f is a block-quantized format.
func (f Format) Quantized() bool {
	_, ok := quantFormats[f]
	return ok
}

// BlockBytes returns the bytes of one block of a quantized format (0 for the others); a
// block holds BlockElems elements.
func (f Format) BlockBytes() int { return quantFormats[f].bytes }

// BlockElems returns the elements of one block of a quantized format (32, 64, 128 or 256;
// 0 for the others).
func (f Format) BlockElems() int { return quantFormats[f].elems }

// QuantFormat returns the quantized format of ggml's type name (ggml_type_name, e.g.
// "q4_0", "q4_K"); ok is false when the kernels cannot read that type.
func QuantFormat(typeName string) (f Format, ok bool) {
	for f, q := range quantFormats {
		if q.name == typeName {
			return f, true
		}
	}
	return 0, false
}

// quantFormat is one block-quantized format, a row of quantFormats (adding a format is
// its Format constant, one row and the routine in it): its name (ggml's type name), the
// elements and bytes of one block (layouts of ggml-common.h, see docs/ARCHITECTURE.md
// section 3) and its one dequantization routine, shared by every kernel that reads the
// format. Blocks hold a power of two elements, a multiple of 8.
//
// The routine is the body of NAME_get8(i) -> mat2x4<f32>, elements i..i+7 (i a multiple
// of 8, so inside one block) of the operand NAME. It sees `b`, the byte address of the
// block within the binding, and `s`, the eighth-element group of the block it returns
// (elements 8s..8s+7: 0..3 in a block of 32, 0..31 in one of 256), and reads bytes with
// NAME_bytes4(a): the four bytes from byte a (any alignment) as a little-endian u32.
// A format with a layout in nibbleLayouts (nibbles.go) reads its scales with that
// layout's NAME_affine(b, j), written once for both mat-vec kernels.
// Helpers of common.wgsl unpack them. f16 scales are the low half of a word read at their
// address.
// The formats kernels also write have their one quantization routine in quantWriters
// (quantize.go).
type quantFormat struct {
	name  string
	elems int
	bytes int
	get8  string
}

// quantPairs gives, per format, the distance D in eighth groups between two groups of
// a block whose routine reads the same words (the low and high nibbles of the same bytes,
// or the 2-bit runs of the same bytes): groups s and s + D for every s with bit log2(D)
// clear. A kernel that takes both groups in one invocation loads those words once.
// Formats not listed have no such pairs.
var quantPairs = map[Format]int{
	Q4_0: 2, Q4_1: 2, Q5_0: 2, Q5_1: 2, IQ4_NL: 2, MXFP4: 2, IQ4_XS: 2,
	Q4_K: 4, Q5_K: 4, Q2_K: 4, Q3_K: 4, TQ2_0: 4,
	Q6_K:  8,
	NVFP4: 1,
}

// PairDistance returns quantPairs' distance for f (0: no pairs).
func (f Format) PairDistance() int { return quantPairs[f] }

// formatTables holds, per format that needs them, the module-scope WGSL declarations its
// routine uses, one per line; a module gets each line once however many operands use it.
// The IQ formats' lookup tables are generated from ggml into iq_tables.go (`go generate
// ./wgsl`). naga refuses dynamic indices into const arrays and a private copy per
// invocation is far too slow on CPU drivers, so the large ones live in workgroup memory:
// a line `var<workgroup> NAME: ...;` declares such a table, and the module's
// formats_init(lid), which every kernel that reads quantized operands calls first, fills
// it with NAME_init() (see Source).
var formatTables = map[Format]string{
	IQ4_NL:  iq4Levels + iq4Helpers,
	IQ4_XS:  iq4Levels + iq4Helpers,
	IQ2_XXS: iq2xxsGrid + iqSignHelpers,
	IQ2_XS:  iq2xsGrid + iqSignHelpers,
	IQ2_S:   iq2sGrid + iqSignHelpers,
	IQ3_XXS: iq3xxsGrid + iqSignHelpers,
	IQ3_S:   iq3sGrid + iqSignHelpers,
	IQ1_S:   iq1sGrid + iq1Delta + iq1Helpers,
	IQ1_M:   iq1sGrid + iq1Delta + iq1Helpers,
}

// levelTables holds, per format, the tables a module takes beside formatTables' where the
// spec defines LEVELS (the integer mat-vec's form that looks IQ4_NL's levels up as
// integers): only those kernels fill them.
var levelTables = map[Format]string{
	IQ4_NL: iq4Ints,
	IQ4_XS: iq4Ints,
}

// iq4Helpers maps four 4-bit indices to their levels.
const iq4Helpers = "fn iq4_level4(q: vec4<u32>) -> vec4<f32> { return vec4<f32>(iq4_level(q.x), iq4_level(q.y), iq4_level(q.z), iq4_level(q.w)); }\n"

// iqSignHelpers serve the IQ2 and IQ3 formats: iq_signs(i) is the sign byte of a 7-bit
// sign index (the index, and as bit 7 the parity of its bits: ksigns_iq2xs, checked
// against ggml by the table generator); iq_signed8(g, sb, d) returns the eight bytes of a
// grid entry (two words) times d, negated where sign byte sb has a bit set (the bit moved
// to the float's sign).
const iqSignHelpers = "fn iq_signs(i: u32) -> u32 { return i | ((countOneBits(i) & 1u) << 7u); }\n" +
	"fn iq_signed8(g: vec2<u32>, sb: u32, d: f32) -> mat2x4<f32> { let m = vec4<u32>(0x80000000u); " +
	"return mat2x4<f32>(bitcast<vec4<f32>>(bitcast<vec4<u32>>(d * (bytes1024(g.x) - 1024.0)) ^ ((vec4<u32>(sb) << vec4<u32>(31u, 30u, 29u, 28u)) & m)), " +
	"bitcast<vec4<f32>>(bitcast<vec4<u32>>(d * (bytes1024(g.y) - 1024.0)) ^ ((vec4<u32>(sb) << vec4<u32>(27u, 26u, 25u, 24u)) & m))); }\n"

// iq1Helpers: iq1_values8(g, d, sign) returns the eight values of grid entry g (16 bits,
// see iq1s_grid_get) shifted by iq1_delta, negated when sign is set, times d.
const iq1Helpers = "fn iq1_values8(g: u32, d: f32, sign: bool) -> mat2x4<f32> { let dl = select(iq1_delta, -iq1_delta, sign) - 1.0; " +
	"return mat2x4<f32>(d * (uf4((vec4<u32>(g) >> vec4<u32>(0u, 2u, 4u, 6u)) & vec4<u32>(3u), 0.0) + dl), d * (uf4((vec4<u32>(g) >> vec4<u32>(8u, 10u, 12u, 14u)) & vec4<u32>(3u), 0.0) + dl)); }\n"

//go:generate go run ./internal/gengrids -lib ../.cache/ggml/lib -out iq_tables.go

var quantFormats = map[Format]quantFormat{
	// {f16 d; i8 qs[32]}: x = q * d.
	Q8_0: {"q8_0", 32, 34, `
  let d = unpack2x16float(NAME_bytes4(b)).x;
  let o = b + 2u + 8u * s;
  return mat2x4<f32>(d * i8x4(NAME_bytes4(o)), d * i8x4(NAME_bytes4(o + 4u)));`},
	// {f16 d; u8 qs[16]}: element j < 16 is the low nibble of qs[j], j + 16 its high
	// nibble; x = (q - 8) * d. Q4_0, Q4_1 and Q4_K: the layout's pieces in nibbleLayouts.
	Q4_0: {"q4_0", 32, 18, nibbleGet8(16)},
	// {f16 d; f16 m; u8 qs[16]}: nibbles as Q4_0; x = q * d + m.
	Q4_1: {"q4_1", 32, 20, nibbleGet8(16)},
	// {f16 d; u8 qh[4]; u8 qs[16]}: nibbles as Q4_0, the fifth bit of element j is bit j
	// of qh; x = (q - 16) * d.
	Q5_0: {"q5_0", 32, 22, `
  let d = NAME_affine(b, 0u).x;
  let h = NAME_bytes4(b + 2u) >> (8u * s);
  let o = b + 6u + 8u * (s & 1u);
  let sh = 4u * (s >> 1u);
  return mat2x4<f32>(d * (hbits1024(NAME_bytes4(o), sh, 0x0f0f0f0fu, spread4(h), 0u, 4u) - 1040.0),
                     d * (hbits1024(NAME_bytes4(o + 4u), sh, 0x0f0f0f0fu, spread4(h >> 4u), 0u, 4u) - 1040.0));`},
	// {f16 d; f16 m; u8 qh[4]; u8 qs[16]}: q as Q5_0; x = q * d + m.
	Q5_1: {"q5_1", 32, 24, `
  let dm = NAME_affine(b, 0u);
  let h = NAME_bytes4(b + 4u) >> (8u * s);
  let o = b + 8u + 8u * (s & 1u);
  let sh = 4u * (s >> 1u);
  return mat2x4<f32>((hbits1024(NAME_bytes4(o), sh, 0x0f0f0f0fu, spread4(h), 0u, 4u) - 1024.0) * dm.x + dm.y,
                     (hbits1024(NAME_bytes4(o + 4u), sh, 0x0f0f0f0fu, spread4(h >> 4u), 0u, 4u) - 1024.0) * dm.x + dm.y);`},
	// {f16 d; f16 dmin; u8 scales[12]; u8 qs[128]}: eight sub-blocks of 32 elements with
	// 6-bit scales and mins (k4_scale_min). Sub-block j's elements are the low (j even)
	// or high (j odd) nibbles of qs[32 (j / 2) ..]; x = d sc_j q - dmin m_j.
	Q4_K: {"q4_K", 256, 144, nibbleGet8(32)},
	// {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d}: two halves of 128 elements, each four
	// runs of 32: run r of half h takes the nibbles (low for r < 2) of ql[64 h + 32 (r & 1) ..]
	// and bits 2r, 2r + 1 of qh[32 h ..] as bits 4, 5; one scale per 16 elements (index
	// s / 2 for group s); x = d sc (q - 32). The layout's pieces: q6kLayout.
	Q6_K: {"q6_K", 256, 210, q6kGet8},
	// {f16 d; f16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}: Q4_K's sub-blocks and
	// nibbles; the fifth bit of element l of sub-block j is bit j of qh[l]; x = d sc_j q - dmin m_j.
	Q5_K: {"q5_K", 256, 176, `
  let j = s >> 2u;
  let f = NAME_affine(b, j); // (d sc_j, -dmin m_j)
  let h = b + 16u + 8u * (s & 3u);
  let o = b + 48u + 32u * (s >> 3u) + 8u * (s & 3u);
  let sh = 4u * (j & 1u);
  return mat2x4<f32>(f.x * (hbits1024(NAME_bytes4(o), sh, 0x0f0f0f0fu, NAME_bytes4(h), j, 4u) - 1024.0) + f.y,
                     f.x * (hbits1024(NAME_bytes4(o + 4u), sh, 0x0f0f0f0fu, NAME_bytes4(h + 4u), j, 4u) - 1024.0) + f.y);`},
	// {u8 scales[16]; u8 qs[64]; f16 d; f16 dmin}: two halves of 128 elements, each four
	// runs of 32: run r of half h takes bits 2r, 2r + 1 of qs[32 h ..]; one byte per 16
	// elements (index s / 2 for group s) holds a 4-bit scale (low) and min (high);
	// x = d sc q - dmin m.
	Q2_K: {"q2_K", 256, 84, `
  let dm = unpack2x16float(NAME_bytes4(b + 80u));
  let sc = NAME_bytes4(b + (s >> 1u));
  let d = dm.x * uf(sc & 15u, 0.0);
  let m = dm.y * uf((sc >> 4u) & 15u, 0.0);
  let o = b + 16u + 32u * (s >> 4u) + 8u * (s & 3u);
  let sh = 2u * ((s >> 2u) & 3u);
  return mat2x4<f32>(d * uf4(ux4(NAME_bytes4(o), sh, 3u), 0.0) - m, d * uf4(ux4(NAME_bytes4(o + 4u), sh, 3u), 0.0) - m);`},
	// {u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d}: the runs of Q2_K; element l of run
	// r of half h has bit 4h + r of hmask[l] as its third bit, clear meaning q - 4; sixteen
	// 6-bit scales (k3_scale) biased by 32; x = d (sc - 32) q.
	Q3_K: {"q3_K", 256, 110, `
  let k = s >> 1u;
  let sc = k3_scale(k, NAME_bytes4(b + 96u + 4u * ((k >> 2u) & 1u)), NAME_bytes4(b + 104u));
  let d = unpack2x16float(NAME_bytes4(b + 108u)).x * uf(sc, 32.0);
  let o = b + 32u + 32u * (s >> 4u) + 8u * (s & 3u);
  let hm = b + 8u * (s & 3u);
  let sh = 2u * ((s >> 2u) & 3u);
  let hb = 4u * (s >> 4u) + ((s >> 2u) & 3u);
  return mat2x4<f32>(d * (hbits1024(NAME_bytes4(o), sh, 0x03030303u, NAME_bytes4(hm), hb, 2u) - 1028.0),
                     d * (hbits1024(NAME_bytes4(o + 4u), sh, 0x03030303u, NAME_bytes4(hm + 4u), hb, 2u) - 1028.0));`},
	// {u8 e; u8 qs[16]}: E2M1 nibbles ordered as Q4_0's (fp4h4: their values times
	// 2^-14), under the E8M0 exponent e: x = v * 2^(e - 127), the scale 2^(e - 128)
	// (2^-128 and 2^-127 for e = 0, 1, as ggml_e8m0_to_fp32_half) times 2^15. Past e = 240
	// that product overflows, so there the values take 2^15 first.
	MXFP4: {"mxfp4", 32, 17, `
  let e = NAME_bytes4(b) & 0xffu;
  let d = select(bitcast<f32>((e - 1u) << 23u), bitcast<f32>(0x00200000u << e), e < 2u);
  let big = e > 240u;
  let f = select(d * 32768.0, d, big);
  let g = select(1.0, 32768.0, big);
  let o = b + 1u + 8u * (s & 1u);
  let sh = 4u * (s >> 1u);
  return mat2x4<f32>(f * (g * fp4h4(NAME_bytes4(o), sh)), f * (g * fp4h4(NAME_bytes4(o + 4u), sh)));`},
	// {u8 d[4]; u8 qs[32]}: four sub-blocks of 16 elements, sub-block k scaled by the UE4M3
	// byte d[k] (ue4m3, halved) with its elements j < 8 the low nibbles of qs[8k + j] and
	// j + 8 their high nibbles, E2M1 (fp4h4, times 2^-14): x = 2 v d_k.
	NVFP4: {"nvfp4", 64, 36, `
  let d = 32768.0 * ue4m3(NAME_bytes4(b + (s >> 1u)) & 0xffu);
  let o = b + 4u + 8u * (s >> 1u);
  let sh = 4u * (s & 1u);
  return mat2x4<f32>(d * fp4h4(NAME_bytes4(o), sh), d * fp4h4(NAME_bytes4(o + 4u), sh));`},
	// {u8 qs[48]; u8 qh[4]; f16 d}: ternary digits, five per byte of qs and four per byte
	// of qh (tq1x4). Elements 0..159 are digit n = e / 32 of qs[e % 32], 160..239 digit
	// (e - 160) / 16 of qs[32 + e % 16], 240..255 digit (e - 240) / 4 of qh[e % 4];
	// x = (q - 1) d.
	TQ1_0: {"tq1_0", 256, 54, `
  let d = unpack2x16float(NAME_bytes4(b + 52u)).x;
  let t = s - 20u;
  let last = s >= 30u;
  let o = select(select(b + 32u + 8u * (t & 1u), b + 48u, last), b + 8u * (s & 3u), s < 20u);
  let n = select(select(t >> 1u, 2u * (s - 30u), last), s >> 2u, s < 20u);
  return mat2x4<f32>(d * (tq1x4(NAME_bytes4(o), n) - 1.0), d * (tq1x4(NAME_bytes4(select(o + 4u, o, last)), select(n, n + 1u, last)) - 1.0));`},
	// {u8 qs[64]; f16 d}: 2-bit values in Q2_K's runs (run r of half h: bits 2r, 2r + 1 of
	// qs[32 h ..]); x = (q - 1) d.
	TQ2_0: {"tq2_0", 256, 66, `
  let d = unpack2x16float(NAME_bytes4(b + 64u)).x;
  let o = b + 32u * (s >> 4u) + 8u * (s & 3u);
  let sh = 2u * ((s >> 2u) & 3u);
  return mat2x4<f32>(d * uf4(ux4(NAME_bytes4(o), sh, 3u), 1.0), d * uf4(ux4(NAME_bytes4(o + 4u), sh, 3u), 1.0));`},
	// {f16 d; u8 qs[16]}: one bit per element, element j bit j % 8 of qs[j / 8]; x = d for
	// a set bit, -d otherwise.
	Q1_0: {"q1_0", 128, 18, `
  let d = unpack2x16float(NAME_bytes4(b)).x;
  let h = NAME_bytes4(b + 2u + s);
  return mat2x4<f32>(d * (2.0 * bits4(h) - 1.0), d * (2.0 * bits4(h >> 4u) - 1.0));`},
	// {f16 d; u8 qs[16]}: two bits per element, element j bits 2 (j % 4), 2 (j % 4) + 1 of
	// qs[j / 4]; x = (q - 1) d.
	Q2_0: {"q2_0", 64, 18, `
  let d = unpack2x16float(NAME_bytes4(b)).x;
  let w = vec4<u32>(NAME_bytes4(b + 2u + 2u * s));
  return mat2x4<f32>(d * uf4((w >> vec4<u32>(0u, 2u, 4u, 6u)) & vec4<u32>(3u), 1.0),
                     d * uf4((w >> vec4<u32>(8u, 10u, 12u, 14u)) & vec4<u32>(3u), 1.0));`},
	// {f16 d; u8 qs[16]}: nibbles as Q4_0, indices of the sixteen non-linear levels
	// (iq4_level); x = d level.
	IQ4_NL: {"iq4_nl", 32, 18, `
  let d = NAME_affine(b, 0u).x;
  let o = b + 2u + 8u * (s & 1u);
  let sh = 4u * (s >> 1u);
  return mat2x4<f32>(d * iq4_level4(ux4(NAME_bytes4(o), sh, 15u)), d * iq4_level4(ux4(NAME_bytes4(o + 4u), sh, 15u)));`},
	// {f16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128]}: eight sub-blocks of 32 with
	// 6-bit scales (nibble j of scales_l over bits 2j, 2j + 1 of scales_h), each IQ4_NL's
	// nibbles of qs[16 j ..]; x = d (sc - 32) level.
	IQ4_XS: {"iq4_xs", 256, 136, `
  let j = s >> 2u;
  let d = NAME_affine(b, j).x; // d (sc_j - 32)
  let o = b + 8u + 16u * j + 8u * (s & 1u);
  let sh = 4u * ((s >> 1u) & 1u);
  return mat2x4<f32>(d * iq4_level4(ux4(NAME_bytes4(o), sh, 15u)), d * iq4_level4(ux4(NAME_bytes4(o + 4u), sh, 15u)));`},
	// {f16 d; per 32 elements two words: four indices of iq2xxs_grid (a byte each), then
	// four 7-bit sign indices and a 4-bit scale (top)}; x = d (0.5 + sc) / 4 grid.
	IQ2_XXS: {"iq2_xxs", 256, 66, `
  let o = b + 2u + 8u * (s >> 2u);
  let l = s & 3u;
  let aux = NAME_bytes4(o + 4u);
  let d = unpack2x16float(NAME_bytes4(b)).x * (0.5 + uf(aux >> 28u, 0.0)) * 0.25;
  let g = iq2xxs_grid_get((NAME_bytes4(o) >> (8u * l)) & 255u);
  return iq_signed8(g, iq_signs((aux >> (7u * l)) & 127u), d);`},
	// {f16 d; u16 qs[32] (a 9-bit index of iq2xs_grid under a 7-bit sign index per eight
	// elements); u8 scales[8] (a nibble per 16 elements)}; x = d (0.5 + sc) / 4 grid.
	IQ2_XS: {"iq2_xs", 256, 74, `
  let q = NAME_bytes4(b + 2u + 2u * s) & 0xffffu;
  let sc = (NAME_bytes4(b + 66u + (s >> 2u)) >> (4u * ((s >> 1u) & 1u))) & 15u;
  let d = unpack2x16float(NAME_bytes4(b)).x * (0.5 + uf(sc, 0.0)) * 0.25;
  return iq_signed8(iq2xs_grid_get(q & 511u), iq_signs(q >> 9u), d);`},
	// {f16 d; u8 qs[32] (index bits 0..7 of iq2s_grid per eight elements); u8 signs[32];
	// u8 qh[8] (index bits 8, 9 of group s at bit 2 (s % 4) of qh[s / 4]); u8 scales[8]
	// (a nibble per 16 elements)}; x = d (0.5 + sc) / 4 grid.
	IQ2_S: {"iq2_s", 256, 82, `
  let qh = (NAME_bytes4(b + 66u + (s >> 2u)) >> (2u * (s & 3u))) & 3u;
  let sc = (NAME_bytes4(b + 74u + (s >> 2u)) >> (4u * ((s >> 1u) & 1u))) & 15u;
  let d = unpack2x16float(NAME_bytes4(b)).x * (0.5 + uf(sc, 0.0)) * 0.25;
  let g = iq2s_grid_get((NAME_bytes4(b + 2u + s) & 255u) | (qh << 8u));
  return iq_signed8(g, NAME_bytes4(b + 34u + s) & 255u, d);`},
	// {f16 d; u8 qs[64] (an index of iq3xxs_grid per four elements); per 32 elements a
	// word of four 7-bit sign indices and a 4-bit scale (top)}; x = d (0.5 + sc) / 2 grid.
	IQ3_XXS: {"iq3_xxs", 256, 98, `
  let q = NAME_bytes4(b + 2u + 2u * s);
  let aux = NAME_bytes4(b + 66u + 4u * (s >> 2u));
  let d = unpack2x16float(NAME_bytes4(b)).x * (0.5 + uf(aux >> 28u, 0.0)) * 0.5;
  let g = vec2<u32>(iq3xxs_grid_get(q & 255u), iq3xxs_grid_get((q >> 8u) & 255u));
  return iq_signed8(g, iq_signs((aux >> (7u * (s & 3u))) & 127u), d);`},
	// {f16 d; u8 qs[64] (index bits 0..7 of iq3s_grid per four elements); u8 qh[8] (bit 8
	// of index p at bit p % 8 of qh[p / 8]); u8 signs[32]; u8 scales[4] (a nibble per 32
	// elements)}; x = d (1 + 2 sc) grid.
	IQ3_S: {"iq3_s", 256, 110, `
  let j = s >> 2u;
  let q = NAME_bytes4(b + 2u + 2u * s);
  let qh = (NAME_bytes4(b + 66u + j) >> (2u * (s & 3u))) & 3u;
  let sc = (NAME_bytes4(b + 106u + (j >> 1u)) >> (4u * (j & 1u))) & 15u;
  let d = unpack2x16float(NAME_bytes4(b)).x * uf(1u + 2u * sc, 0.0);
  let g = vec2<u32>(iq3s_grid_get((q & 255u) | ((qh & 1u) << 8u)), iq3s_grid_get(((q >> 8u) & 255u) | ((qh >> 1u) << 8u)));
  return iq_signed8(g, NAME_bytes4(b + 74u + s) & 255u, d);`},
	// {f16 d; u8 qs[32] (index bits 0..7 of iq1s_grid per eight elements); u16 qh[8] (per
	// 32 elements: index bits 8..10 of group l at bit 3l, a 3-bit scale at bit 12, the
	// delta's sign at bit 15)}; x = d (2 sc + 1) (grid +- iq1_delta).
	IQ1_S: {"iq1_s", 256, 50, `
  let qh = NAME_bytes4(b + 34u + 2u * (s >> 2u));
  let d = unpack2x16float(NAME_bytes4(b)).x * uf(2u * ((qh >> 12u) & 7u) + 1u, 0.0);
  let g = iq1s_grid_get((NAME_bytes4(b + 2u + s) & 255u) | (((qh >> (3u * (s & 3u))) & 7u) << 8u));
  return iq1_values8(g, d, (qh & 0x8000u) != 0u);`},
	// {u8 qs[32] (index bits 0..7 of iq1s_grid per eight elements); u8 qh[16] (a nibble
	// per eight elements: index bits 8..10, the delta's sign at bit 3); u16 scales[4]
	// (3-bit scales, four per word per 64 elements; the top nibbles of the four words
	// make the f16 scale d)}; x = d (2 sc + 1) (grid +- iq1_delta).
	IQ1_M: {"iq1_m", 256, 56, `
  let w0 = NAME_bytes4(b + 48u);
  let w1 = NAME_bytes4(b + 52u);
  let dh = ((w0 >> 12u) & 0xfu) | ((w0 >> 24u) & 0xf0u) | ((w1 >> 4u) & 0xf00u) | ((w1 >> 16u) & 0xf000u);
  let sc = (NAME_bytes4(b + 48u + 2u * (s >> 3u)) >> (6u * ((s >> 2u) & 1u) + 3u * ((s >> 1u) & 1u))) & 7u;
  let d = unpack2x16float(dh).x * uf(2u * sc + 1u, 0.0);
  let h = (NAME_bytes4(b + 32u + (s >> 1u)) >> (4u * (s & 1u))) & 15u;
  let g = iq1s_grid_get((NAME_bytes4(b + s) & 255u) | ((h & 7u) << 8u));
  return iq1_values8(g, d, (h & 8u) != 0u);`},
}

// accessors declares a quantized operand as u32 words, NAME_bytes4(a) and the
// format's NAME_get8(i) (see quantFormat). Element i of the operand is element i % E of
// block i / E (E the format's block elements), the block starting
// p.NAME_off + (i / E) * block bytes into the binding.
//
// NAME_bytes4 reads both words that may hold the four bytes, without a branch on the
// alignment: neighbouring invocations read blocks and fields of either alignment, and on
// an NVIDIA H100 the branch cost more than the second load (mat-vec, 14336 x 4096: Q8_0
// 56 -> 44 µs, Q4_0 58 -> 48 µs at one column; Q4_K 173 -> 132 µs at eight columns,
// 79 -> 83 µs at one).
func (q quantFormat) accessors(name string, binding int, readOnly bool) string {
	shift := bits.TrailingZeros(uint(q.elems))
	return storageDecl(name, binding, readOnly) + "array<u32>;\n" +
		strings.ReplaceAll(`fn NAME_bytes4(a: u32) -> u32 {
  let i = a >> 2u;
  let sh = (a & 3u) * 8u;
  let lo = NAME[i];
  let hi = NAME[i + 1u];
  return select((lo >> sh) | (hi << (32u - sh)), lo, sh == 0u);
}
fn NAME_get8(i: u32) -> mat2x4<f32> {
  let b = p.NAME_off + (i >> `+fmt.Sprint(shift)+`u) * `+fmt.Sprint(q.bytes)+`u;
  let s = (i >> 3u) & `+fmt.Sprint(q.elems/8-1)+`u;`+q.get8+`
}
`, "NAME", name) + q.unitAccessors(name) + nibbleAccessors(q.format(), name) + q6kAccessors(q.format(), name)
}

// format returns the Format of q.
func (q quantFormat) format() Format {
	f, _ := QuantFormat(q.name)
	return f
}

// unitBlocks is the fewest blocks of q whose bytes are a whole number of 4-byte words.
func (q quantFormat) unitBlocks() int {
	for g := 1; ; g *= 2 {
		if g*q.bytes%4 == 0 {
			return g
		}
	}
}

// UnitElems returns the elements of a quantized format's unit (0 for the others): the
// fewest whole blocks that fill whole 4-byte words, so that a unit starting at a word
// boundary has every field at a fixed place in its words. See unitAccessors.
func (f Format) UnitElems() int {
	q, ok := quantFormats[f]
	if !ok {
		return 0
	}
	return q.unitBlocks() * q.elems
}

// unitAccessors declares the unit reads of a quantized operand: NAME_unit_word(i), the
// word where the unit of element i (a multiple of UnitElems, its byte offset a multiple
// of 4) starts, and NAME_get8u(w, blk, s), elements 8s..8s+7 of block blk of the unit
// starting at word w. The body is the format's one routine, reading its bytes with
// NAME_bytes4u(w, a) (the four bytes from byte a of the unit). A kernel that calls
// NAME_get8u with blk a literal (the preprocessor's #for) tells the compiler where the
// block starts within a word: every field whose offset in the block has known low bits
// is read with constant shifts, and with one load where it is aligned, where NAME_get8
// reads two words per field at run-time alignments. Module constants: NAME_UNIT_ELEMS,
// NAME_BLOCK_ELEMS and NAME_BLOCK_EIGHTHS.
func (q quantFormat) unitAccessors(name string) string {
	shift := bits.TrailingZeros(uint(q.elems))
	body := unitReads(q.get8)
	return strings.ReplaceAll(fmt.Sprintf(`const NAME_UNIT_ELEMS = %du;
const NAME_BLOCK_ELEMS = %du;
const NAME_BLOCK_EIGHTHS = %du;
fn NAME_unit_word(i: u32) -> u32 { return (p.NAME_off + (i >> %du) * %du) >> 2u; }
fn NAME_bytes4u(w: u32, a: u32) -> u32 {
  let i = w + (a >> 2u);
  let sh = (a & 3u) * 8u;
  let lo = NAME[i];
  let hi = NAME[i + 1u];
  return select((lo >> sh) | (hi << (32u - sh)), lo, sh == 0u);
}
fn NAME_get8u(unit_word: u32, blk: u32, s: u32) -> mat2x4<f32> {
  let b = blk * %du;%s
}
`, q.unitBlocks()*q.elems, q.elems, q.elems/8, shift, q.bytes, q.bytes, body), "NAME", name)
}
