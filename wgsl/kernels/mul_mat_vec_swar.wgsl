// The integer mat-vecs' SWAR products (mul_mat_vec_q4.wgsl, mul_mat_vec_q4k.wgsl): two
// 4-bit weights in the 16-bit lanes of a word times two quantized activations in the
// lanes of another (mul_mat_vec_q4_quant.wgsl), the two-element dot product in the upper
// half of the wrapped 32-bit product.

// The two-element dot products of up to 8 wrapped SWAR products summed in acc: the upper
// half of acc less the borrow of the sign-extended lower half.
fn swar_dot(acc: i32) -> i32 {
  let lo = (acc << 16u) >> 16u;
  return (acc - lo) >> 16u;
}

// The lane words of quant word q's SWAR products: its low nibbles of bytes 0 and 2, of 1
// and 3, its high nibbles of bytes 0 and 2, of 1 and 3, each pair in the 16-bit lanes.
fn nibble_lanes(q: u32) -> vec4<u32> {
  return vec4<u32>(q, q >> 8u, q >> 4u, q >> 12u) & vec4<u32>(0x000f000fu);
}

// The SWAR products of lane words l (nibble_lanes, as integers) with activation words x:
// the low nibbles' two in .x, the high nibbles' in .y.
fn lanes_dot(l: vec4<i32>, x: vec4<i32>) -> vec2<i32> {
  return vec2<i32>(l.x * x.x + l.y * x.y, l.z * x.z + l.w * x.w);
}

// The SWAR products of the nibbles of word q with the activation words x.
fn nibble_dot(q: u32, x: vec4<i32>) -> vec2<i32> {
  return lanes_dot(vec4<i32>(nibble_lanes(q)), x);
}
