package wgsl

import (
	"fmt"
	"strings"
)

// nibbleLayout is the layout of a format whose quants are plain integers under an affine
// map per sub-block of 32 elements, read by the integer mat-vec kernel
// (mul_mat_vec_q4.wgsl): the 4-bit formats (Q4_0, Q4_1, Q4_K: nibbles, unsigned), whose
// one dequantization routine (nibbleGet8) reads the same pieces, so that the layout is
// written once, Q5_K, Q5_0 and Q5_1 (nibbles topped with a fifth bit from qh), Q8_0 (bytes,
// signed), MXFP4 (nibbles holding E2M1 codes, which the
// kernel turns into the integers of ggml's kvalues_mxfp4: fp4) and IQ4_NL and IQ4_XS
// (nibbles indexing the sixteen signed levels of kvalues_iq4nl: levels).
//
// The block's quants are 4-byte words. Of a nibble format, word g holds, in its bytes
// 0..3, four consecutive elements e..e+3 in the low nibbles and elements e+half..e+half+3
// in the high nibbles, where e = 2 half (g / (half / 4)) + 4 (g % (half / 4)). A group is
// the 2 half elements of half / 4 consecutive words (32 for Q4_0 and Q4_1, whose qs[j]
// holds elements j and j + 16; 64 for Q4_K, whose qs[32 i + l] holds elements 64 i + l and
// 64 i + 32 + l). Of Q8_0 (bytes), word g holds elements 4g..4g+3, and a group is the 32
// elements of a block's 8 words; half is 4, the distance between the elements of words g
// and g + 1 that one activation vector of the kernel pairs.
type nibbleLayout struct {
	half  int
	bytes bool // 8-bit signed quants, four a word
	fp4   bool // E2M1 codes (sign, exponent, mantissa) in the nibbles: twice their values
	// levels: the nibbles index IQ4_NL's levels (iq4_int), signed bytes
	levels bool
	// qh, where set, is a WGSL expression of b and w (a word index within a group): the
	// byte address of the word of fifth bits of the group's quant word w, bit 2 (g / (half /
	// 4)) of each byte for its low nibbles, the next bit for its high ones (Q5_K); with
	// qhWord, bit e of the block's one word for its element e (Q5_0, Q5_1).
	qh     string
	qhWord bool
	// qs is a WGSL expression of b (the block's first byte) and g (a word index): the
	// byte address of quant word g.
	qs string
	// affine is the WGSL body of a function of b and j (a sub-block of 32 elements) that
	// returns the sub-block's (scale, offset): element x = scale * q + offset. It reads
	// bytes with NAME_bytes4.
	affine string
}

// kAffine is the affine map of sub-block j of Q4_K and Q5_K, whose blocks start with the
// same f16 d, f16 dmin and 12 scale bytes (k4_scale_min).
const kAffine = "let dm = unpack2x16float(NAME_bytes4(b)); " +
	"let sm = k4_scale_min(j, NAME_bytes4(b + 4u), NAME_bytes4(b + 8u), NAME_bytes4(b + 12u)); " +
	"return vec2<f32>(dm.x * sm.x, -(dm.y * sm.y));"

// nibbleLayouts holds the layouts of the integer mat-vec's formats (ggml-common.h: Q4_0
// {f16 d; u8 qs[16]} x = (q - 8) d; Q4_1 {f16 d; f16 m; u8 qs[16]} x = q d + m; Q4_K {f16
// d; f16 dmin; u8 scales[12]; u8 qs[128]} x = d sc_j q - dmin m_j, k4_scale_min; Q8_0
// {f16 d; i8 qs[32]} x = q d; MXFP4 {u8 e; u8 qs[16]}, nibbles ordered as Q4_0's, x =
// kvalues_mxfp4[q] 2^(e - 128), the scale as ggml_e8m0_to_fp32_half; IQ4_NL {f16 d; u8
// qs[16]}, nibbles ordered as Q4_0's, x = d kvalues_iq4nl[q]; IQ4_XS {f16 d; u16 scales_h;
// u8 scales_l[4]; u8 qs[128]}, sub-block j's nibbles in qs[16 j ..] ordered as IQ4_NL's,
// x = d (sc_j - 32) kvalues_iq4nl[q] with the 6-bit sc_j: nibble j of scales_l over bits
// 2 j, 2 j + 1 of scales_h).
var nibbleLayouts = map[Format]nibbleLayout{
	Q4_0: {half: 16, qs: "b + 2u + 4u * g",
		affine: "let d = unpack2x16float(NAME_bytes4(b)).x; return vec2<f32>(d, -8.0 * d);"},
	Q4_1: {half: 16, qs: "b + 4u + 4u * g",
		affine: "return unpack2x16float(NAME_bytes4(b));"},
	Q4_K: {half: 32, qs: "b + 16u + 4u * g",
		affine: kAffine},
	Q5_K: {half: 32, qs: "b + 48u + 4u * g", qh: "b + 16u + 4u * w",
		affine: kAffine},
	Q5_0: {half: 16, qs: "b + 6u + 4u * g", qh: "b + 2u", qhWord: true,
		affine: "let d = unpack2x16float(NAME_bytes4(b)).x; return vec2<f32>(d, -16.0 * d);"},
	Q5_1: {half: 16, qs: "b + 8u + 4u * g", qh: "b + 4u", qhWord: true,
		affine: "return unpack2x16float(NAME_bytes4(b));"},
	Q8_0: {half: 4, bytes: true, qs: "b + 2u + 4u * g",
		affine: "return vec2<f32>(unpack2x16float(NAME_bytes4(b)).x, 0.0);"},
	MXFP4: {half: 16, fp4: true, qs: "b + 1u + 4u * g",
		affine: "let e = NAME_bytes4(b) & 0xffu; " +
			"return vec2<f32>(select(bitcast<f32>((e - 1u) << 23u), bitcast<f32>(0x00200000u << e), e < 2u), 0.0);"},
	IQ4_NL: {half: 16, levels: true, qs: "b + 2u + 4u * g",
		affine: "return vec2<f32>(unpack2x16float(NAME_bytes4(b)).x, 0.0);"},
	IQ4_XS: {half: 16, levels: true, qs: "b + 8u + 4u * g",
		affine: "let w = NAME_bytes4(b); " +
			"let sc = ((NAME_bytes4(b + 4u) >> (4u * j)) & 15u) | (((w >> (16u + 2u * j)) & 3u) << 4u); " +
			"return vec2<f32>(unpack2x16float(w).x * uf(sc, 32.0), 0.0);"},
}

// NibbleHalf returns the distance in elements between the low and the high nibble of
// one quant byte of a nibble format (16 or 32), 4 for Q8_0 (see nibbleLayout), 0 for the
// other formats.
func (f Format) NibbleHalf() int { return nibbleLayouts[f].half }

// ByteQuants reports whether the integer mat-vec reads f's quants as signed bytes (Q8_0)
// rather than nibbles (see nibbleLayout).
func (f Format) ByteQuants() bool { return nibbleLayouts[f].bytes }

// NibbleHighBits reports whether f's nibbles take a fifth bit from words of their own
// (Q5_K, Q5_0, Q5_1: see nibbleLayout.qh).
func (f Format) NibbleHighBits() bool { return nibbleLayouts[f].qh != "" }

// HighBitWord reports whether f's fifth bits are one word a block, bit e for element e
// (Q5_0, Q5_1), rather than Q5_K's bits of bytes.
func (f Format) HighBitWord() bool { return nibbleLayouts[f].qhWord }

// LevelQuants reports whether f's nibbles index IQ4_NL's levels (IQ4_NL, IQ4_XS), which
// the integer mat-vec looks up as integers (see nibbleLayout).
func (f Format) LevelQuants() bool { return nibbleLayouts[f].levels }

// FP4Quants reports whether f's nibbles are E2M1 codes (MXFP4), which the integer mat-vec
// turns into integers (see nibbleLayout).
func (f Format) FP4Quants() bool { return nibbleLayouts[f].fp4 }

// nibbleGet8 is the get8 routine of the nibble formats with the given half: group s's
// eight elements are the low or high nibbles of two consecutive quant words, under the
// affine map of their sub-block (s / 4).
func nibbleGet8(half int) string {
	p := half / 8 // eighth groups per half
	return fmt.Sprintf(`
  let ab = NAME_affine(b, s >> 2u);
  let g = (s / %du) * %du + 2u * (s %% %du);
  let sh = 4u * ((s / %du) & 1u);
  return mat2x4<f32>(ab.x * u4x4(NAME_qsw(b, g), sh) + ab.y, ab.x * u4x4(NAME_qsw(b, g + 1u), sh) + ab.y);`,
		2*p, half/4, p, p)
}

// nibbleAccessors declares, for a format of nibbleLayouts, NAME_affine(b, j) and NAME_qsw(b, g)
// (quant word g of the block at byte b), and their unit forms NAME_affineu(w, b, j) and
// NAME_qswu(w, b, g) reading the unit that starts at word w (b: the block's byte within
// the unit), with NAME_BLOCK_BYTES, and for Q5_K NAME_qhwu(w, b, i) (the word of fifth bits
// of a group's quant word i); empty for the other formats.
func nibbleAccessors(f Format, name string) string {
	n, ok := nibbleLayouts[f]
	if !ok {
		return ""
	}
	s := fmt.Sprintf("const NAME_BLOCK_BYTES = %du;\n", quantFormats[f].bytes) +
		"fn NAME_affine(b: u32, j: u32) -> vec2<f32> { " + n.affine + " }\n" +
		"fn NAME_qsw(b: u32, g: u32) -> u32 { return NAME_bytes4(" + n.qs + "); }\n" +
		"fn NAME_affineu(unit_word: u32, b: u32, j: u32) -> vec2<f32> { " + unitReads(n.affine) + " }\n" +
		"fn NAME_qswu(unit_word: u32, b: u32, g: u32) -> u32 { return NAME_bytes4u(unit_word, " + n.qs + "); }\n"
	if n.qh != "" {
		s += "fn NAME_qhwu(unit_word: u32, b: u32, w: u32) -> u32 { return NAME_bytes4u(unit_word, " + n.qh + "); }\n"
	}
	return strings.ReplaceAll(s, "NAME", name)
}

// unitReads turns a routine's reads of the operand's bytes (and of the nibble and Q6_K pieces)
// into reads of the unit at word unit_word.
func unitReads(body string) string {
	return strings.NewReplacer("NAME_bytes4(", "NAME_bytes4u(unit_word, ",
		"NAME_affine(", "NAME_affineu(unit_word, ", "NAME_qsw(", "NAME_qswu(unit_word, ",
		"NAME_q6ql(", "NAME_q6qlu(unit_word, ", "NAME_q6qh(", "NAME_q6qhu(unit_word, ",
		"NAME_q6scales(", "NAME_q6scalesu(unit_word, ", "NAME_q6d(", "NAME_q6du(unit_word, ").Replace(body)
}
