package wgsl

import "strings"

// BF16 operands: two bfloat16 values per u32 word (the element of even index in the low
// half), a value being the high half of its f32. As for F16, a written operand is atomic,
// so that neighbouring halves stored by different invocations do not clobber each other.
//
// Stores round as ggml's CPU does (ggml_compute_fp32_to_bf16 of ggml-impl.h): to nearest,
// ties to even, on the f32 bits; a NaN keeps its top 16 bits with the quiet bit (bit 6 of
// the half) set. Values that round past the largest finite bf16 become infinities.

// bf16Accessors returns NAME_get and, for a written operand, NAME_set; decl is the
// binding's declaration up to its type.
func bf16Accessors(decl, name string, written bool) string {
	if !written {
		return decl + "array<u32>;\n" + strings.ReplaceAll(
			"fn NAME_get(i: u32) -> f32 { let e = p.NAME_off + i; return bitcast<f32>(((NAME[e >> 1u] >> ((e & 1u) * 16u)) & 0xffffu) << 16u); }\n",
			"NAME", name)
	}
	return decl + "array<atomic<u32>>;\n" + strings.ReplaceAll(`fn NAME_get(i: u32) -> f32 {
  let e = p.NAME_off + i;
  return bitcast<f32>(((atomicLoad(&NAME[e >> 1u]) >> ((e & 1u) * 16u)) & 0xffffu) << 16u);
}
fn NAME_set(i: u32, v: f32) {
  let e = p.NAME_off + i;
  let sh = (e & 1u) * 16u;
  let u = bitcast<u32>(v);
  var h = (u + 0x7fffu + ((u >> 16u) & 1u)) >> 16u;
  if ((u & 0x7fffffffu) > 0x7f800000u) { h = (u >> 16u) | 64u; }
  atomicAnd(&NAME[e >> 1u], ~(0xffffu << sh));
  atomicOr(&NAME[e >> 1u], (h & 0xffffu) << sh);
}
`, "NAME", name)
}

// bf16VecAccessors returns NAME_get8 over 16-byte vectors of eight values (i a multiple
// of 8 from a 16-byte aligned start).
func bf16VecAccessors(decl, name string) string {
	return decl + "array<vec4<u32>>;\n" + strings.ReplaceAll(`fn NAME_get8(i: u32) -> mat2x4<f32> {
  let w = NAME[(p.NAME_off + i) >> 3u];
  let lo = w << vec4<u32>(16u);
  let hi = w & vec4<u32>(0xffff0000u);
  return mat2x4<f32>(bitcast<vec4<f32>>(vec4<u32>(lo.x, hi.x, lo.y, hi.y)), bitcast<vec4<f32>>(vec4<u32>(lo.z, hi.z, lo.w, hi.w)));
}
`, "NAME", name)
}
