// Matrix-vector product of Q4_K weights by one src1 column quantized ahead into xq
// (mul_mat_vec_q4_act.wgsl; its layout in mul_mat_vec_q4_quant.wgsl), with the weights
// read sixteen bytes an invocation (src0 bound as 16-byte words, Operand.Vec16):
// dst[i, 0, b2, b3] = sum_k src0[k, i, b2 / R2, b3 / R3] * src1[k, 0, b2, b3]
// Eight invocations take a block (144 bytes: f16 d, f16 dmin, 12 scale bytes, then 128
// bytes of quants, nine 16-byte words): invocation c (0..7) reads the block's first word
// (the same for all eight) and word 1 + c, the quant words 4 h .. 4 h + 3 (h = c % 2) of
// group j = c / 2 (sub-block 2 j's elements 16 h .. 16 h + 15 in their low nibbles,
// sub-block 2 j + 1's in their high ones), so that a SIMD group's weight loads read 512
// consecutive bytes of quants. Their SWAR products (mul_mat_vec_swar.wgsl) with the
// group's activation words 4 h .. 4 h + 3 give each sub-block's integer dot over the
// invocation's 16 elements; the sub-block's offset term (dmin m_j times the activations'
// sum) is added once, by h = 0. A workgroup computes ROWS consecutive rows.
const ROWS = {{ROWS}}u;
const WPG = 8u; // quant words of a group of 64 elements (xq: WPG + 1 vectors a group)
#include mul_mat_vec_sum
#include mul_mat_vec_rows
#include mul_mat_vec_swar

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
#include mul_mat_vec_begin
  let a = (b2 / p.R2) * p.A.z + (b3 / p.R3) * p.A.w;
  let col = w.y * (p.K / 64u); // the batch's first group in xq
  let nb = p.K / 256u;
  var acc: array<f32, {{ACC}}>;
  for (var r = 0u; r < ROWS; r = r + 1u) { acc[r] = 0.0; }
  for (var t = lid; t < 8u * nb; t = t + {{WG}}u) {
    let blk = t / 8u;
    let c = t % 8u;
    let j = c / 2u;
    let h = c % 2u;
    let o = 4u * (col + 4u * blk + j) * (WPG + 1u); // the activation group's first word
    let x0 = xq_get4i(o + 16u * h);
    let x1 = xq_get4i(o + 16u * h + 4u);
    let x2 = xq_get4i(o + 16u * h + 8u);
    let x3 = xq_get4i(o + 16u * h + 12u);
    let xd = bitcast<vec4<f32>>(xq_get4i(o + 4u * WPG)); // (dl, sl, dh, sh)
    for (var r = 0u; r < ROWS; r = r + 1u) {
      let row = a + min(i0 + r, p.M - 1u) * p.A.y; // the row's first element
      let v = (p.src0_off >> 4u) + (row / 256u + blk) * 9u; // the block's first word
      let hd = src0_v16(v);
      let q = src0_v16(v + 1u + c);
      let s = nibble_dot(q.x, x0) + nibble_dot(q.y, x1) + nibble_dot(q.z, x2) + nibble_dot(q.w, x3);
      let dm = unpack2x16float(hd.x);
      let fl = k4_scale_min(2u * j, hd.y, hd.z, hd.w);
      let fh = k4_scale_min(2u * j + 1u, hd.y, hd.z, hd.w);
      var y = dm.x * (fl.x * (xd.x * if32(swar_dot(s.x))) + fh.x * (xd.z * if32(swar_dot(s.y))));
      if (h == 0u) { y = y - dm.y * (fl.y * xd.y + fh.y * xd.w); }
      acc[r] = acc[r] + y;
    }
  }
  sum_partials(lid, &acc);
  if (lid < ROWS && i0 + lid < p.M) {
    dst_set(offset4(vec4<u32>(i0 + lid, 0u, b2, b3), p.D), red[lid * {{WG}}u]);
  }
}
