// The activations of the integer mat-vec (mul_mat_vec_q4.wgsl) quantized, a group of
// 8 * WPG elements of a src1 column at a time: the layout and its helpers, included by
// that kernel, which quantizes the groups it reads (quant_group), and by the kernels that
// quantize a column once into scratch memory (mul_mat_vec_xq_store.wgsl: the columns'
// own dispatch, mul_mat_vec_q4_act.wgsl, and the norm before a feed-forward gate,
// norm.wgsl). The kernel defines HALF, WPG and GROUP (8 * WPG).
// Group q of a column starts at element q * GROUP (the nibble formats) or, with Q6K, at
// element 128 h + 32 p of block q / 4 (h, p: the bits of q % 4; wgsl/q6k.go): its low
// half's elements e (4 per quant word) and its high half's e + HALF. Each half is quantized
// to 8 bits per block of 32 (dx = max|x| / 127, xq = x / dx rounded to nearest; with SPLIT
// each half is its own block, else the group is one block), packed in the weights' nibble
// order: for quant word w (elements e..e+3 in its low nibbles, e+HALF.. in its high ones)
// the words (X(e, e+2), X(e+1, e+3), X(e+HALF, e+HALF+2), X(e+HALF+1, e+HALF+3)) with
// X(a, c) = xq[c] + xq[a] * 65536 (with BYTES, Q8_0, HALF is 4 and vector w, elements
// 8 w..8 w + 7, pairs with two quant words: word_elem). With the words come (dl, sl, dh,
// sh): dx for each half and sx = dx * sum xq, the sum of its quantized activations, so
// that the mat-vec's result is exactly the product of the dequantized weights by the
// quantized activations (its error is sum w (x' - x), small for weights centred on zero,
// where the unquantized sum would leave the larger sum q d (x' - x)).

// The first element of group q of a column.
fn group_start(q: u32) -> u32 {
#if Q6K
  let gg = q % 4u;
  return (q / 4u) * 256u + 128u * (gg >> 1u) + 32u * (gg & 1u);
#else
  return q * GROUP;
#endif
}

// The first of the elements that quant word w of a group pairs in its low lanes, from the
// group's first: 4 w, but 8 w for Q8_0 (HALF 4: wgsl/nibbles.go).
fn word_elem(w: u32) -> u32 {
  return (w / (HALF / 4u)) * 2u * HALF + 4u * (w % (HALF / 4u));
}

// Four activations v times the inverse scale inv (|v inv| <= 127) rounded to the nearest
// integer: v inv + 1.5 * 2^23 holds it in its mantissa, so the bits less those of 1.5 *
// 2^23 are the integer, with no conversion instruction.
fn round8(v: vec4<f32>, inv: f32) -> vec4<i32> {
  return bitcast<vec4<i32>>(v * inv + 12582912.0) - vec4<i32>(0x4b400000);
}

// The activation words of a quant word from its low nibbles' quantized elements l (e..e+3)
// and its high nibbles' h (e+HALF..): X(e, e+2), X(e+1, e+3), X(e+HALF, e+HALF+2),
// X(e+HALF+1, e+HALF+3).
fn quant_word(l: vec4<i32>, h: vec4<i32>) -> vec4<i32> {
  return vec4<i32>(l.z + (l.x << 16u), l.w + (l.y << 16u), h.z + (h.x << 16u), h.w + (h.y << 16u));
}
