package wgsl

import "strings"

// q6kLayout holds the byte addresses of Q6_K's fields ({u8 ql[128]; u8 qh[64];
// i8 scales[16]; f16 d}, ggml-common.h) as WGSL expressions of b (the block's first byte),
// g (a word index) and j (a scale index): the pieces that its one dequantization routine
// (q6kGet8) and the integer mat-vec kernel (mul_mat_vec_q4.wgsl) both read, so that the
// layout is written once.
//
// The element order (dequantize_row_q6_K): half h of 128 elements, l in 0..31, element
// 128 h + 32 r + l (run r in 0..3) takes the low (r < 2) or high nibble of
// ql[64 h + 32 (r & 1) + l] and bits 2r, 2r + 1 of qh[32 h + l] as its bits 4 and 5, minus
// 32, times d scales[8 h + 2 r + l / 16]. So ql word g = 16 h + 8 (r & 1) + l / 4 holds
// four consecutive l of runs r & 1 (low nibbles) and (r & 1) + 2 (high nibbles), and qh
// word 8 h + l / 4 the high bits of those l in all four runs.
var q6kLayout = struct{ ql, qh, scales, d string }{
	ql:     "b + 4u * g",
	qh:     "b + 128u + 4u * g",
	scales: "b + 192u + j",
	d:      "b + 208u",
}

// q6kGet8 is Q6_K's get8 routine: group s (eight consecutive l of run r = (s / 4) % 4 of
// half s / 16) from two ql and two qh words, under scale s / 2.
const q6kGet8 = `
  let r = (s >> 2u) & 3u;
  let d = NAME_q6d(b) * f32(i8x4(NAME_q6scales(b, s >> 1u)).x);
  let g = 16u * (s >> 4u) + 8u * (r & 1u) + 2u * (s & 3u);
  let gh = 8u * (s >> 4u) + 2u * (s & 3u);
  let sl = 4u * (r >> 1u);
  let sh = 2u * r;
  return mat2x4<f32>(d * uf4(ux4(NAME_q6ql(b, g), sl, 15u) | (ux4(NAME_q6qh(b, gh), sh, 3u) << vec4<u32>(4u)), 32.0),
                     d * uf4(ux4(NAME_q6ql(b, g + 1u), sl, 15u) | (ux4(NAME_q6qh(b, gh + 1u), sh, 3u) << vec4<u32>(4u)), 32.0));`

// q6kAccessors declares, for Q6_K, NAME_q6ql(b, g) and NAME_q6qh(b, g) (ql and qh word g
// of the block at byte b), NAME_q6scales(b, j) (the four scale bytes from j), NAME_q6d(b)
// (d, as f32), NAME_q6block(i) (the byte of the block of element i), and the unit forms
// NAME_q6qlu(w, b, g) .. reading the unit that starts at word w; empty for the other
// formats.
func q6kAccessors(f Format, name string) string {
	if f != Q6_K {
		return ""
	}
	l := q6kLayout
	s := "fn NAME_q6ql(b: u32, g: u32) -> u32 { return NAME_bytes4(" + l.ql + "); }\n" +
		"fn NAME_q6qh(b: u32, g: u32) -> u32 { return NAME_bytes4(" + l.qh + "); }\n" +
		"fn NAME_q6scales(b: u32, j: u32) -> u32 { return NAME_bytes4(" + l.scales + "); }\n" +
		"fn NAME_q6d(b: u32) -> f32 { return unpack2x16float(NAME_bytes4(" + l.d + ")).x; }\n" +
		"fn NAME_q6block(i: u32) -> u32 { return p.NAME_off + (i >> 8u) * 210u; }\n" +
		"fn NAME_q6qlu(unit_word: u32, b: u32, g: u32) -> u32 { return NAME_bytes4u(unit_word, " + l.ql + "); }\n" +
		"fn NAME_q6qhu(unit_word: u32, b: u32, g: u32) -> u32 { return NAME_bytes4u(unit_word, " + l.qh + "); }\n" +
		"fn NAME_q6scalesu(unit_word: u32, b: u32, j: u32) -> u32 { return NAME_bytes4u(unit_word, " + l.scales + "); }\n" +
		"fn NAME_q6du(unit_word: u32, b: u32) -> f32 { return unpack2x16float(NAME_bytes4u(unit_word, " + l.d + ")).x; }\n"
	return strings.ReplaceAll(s, "NAME", name)
}
