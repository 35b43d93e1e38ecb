// The column of an integer mat-vec (mul_mat_vec_q4.wgsl with XQ) quantized once, for
// every workgroup of the product, into scratch memory (dst, i32 words): one invocation per
// group of 8 * WPG elements of each of the N src1 columns of each batch (layout and
// scales: mul_mat_vec_q4_quant.wgsl). Group q of column c of batch bt takes WPG + 1
// vectors of 4 words from vector ((bt N + c) K / GROUP + q) (WPG + 1): its WPG activation
// vectors, then (dl, sl, dh, sh) as f32 bits.
const HALF = {{HALF}}u;
const WPG = {{WPG}}u; // quant words per group
const GROUP = 8u * WPG; // elements per group

#include mul_mat_vec_q4_quant

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nwg, lid, {{WG}}u);
  let groups = p.K / GROUP;
  if (i >= groups * p.N * p.Batches) { return; }
  let bc = i / groups; // bt N + c
  let bt = bc / p.N;
  var x: array<vec4<i32>, {{WPG}}>;
  let d = quant_group(&x, (bt % p.Ne2) * p.B.z + (bt / p.Ne2) * p.B.w + (bc % p.N) * p.B.y + group_start(i % groups));
  let o = 4u * i * (WPG + 1u);
  for (var w = 0u; w < WPG; w = w + 1u) {
    for (var j = 0u; j < 4u; j = j + 1u) { dst_seti(o + 4u * w + j, x[w][j]); }
  }
  let e = bitcast<vec4<i32>>(d);
  for (var j = 0u; j < 4u; j = j + 1u) { dst_seti(o + 4u * WPG + j, e[j]); }
}
