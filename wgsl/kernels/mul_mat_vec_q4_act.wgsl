// The columns of an integer mat-vec (mul_mat_vec_q4.wgsl with XQ) quantized once, for
// every workgroup of the product, into scratch memory (dst, i32 words): WPG invocations per
// group of 8 * WPG elements of each of the N src1 columns of each batch, one quant word
// each (layout and scales: mul_mat_vec_q4_quant.wgsl; WG a multiple of WPG, so that a
// group's invocations share a workgroup). Group q of column c of batch bt takes WPG + 1
// vectors of 4 words from vector ((bt N + c) K / GROUP + q) (WPG + 1): its WPG activation
// vectors, then (dl, sl, dh, sh) as f32 bits. The invocations of a group exchange their
// elements' largest magnitudes, then their quantized sums, through workgroup memory (one
// invocation per group, reading all its elements in turn, left the GPU mostly idle).
const HALF = {{HALF}}u;
const WPG = {{WPG}}u; // quant words per group
const GROUP = 8u * WPG; // elements per group

#include mul_mat_vec_q4_quant

var<workgroup> amax: array<vec2<f32>, {{WG}}>; // each invocation's low and high largest magnitude
var<workgroup> qsum: array<vec2<i32>, {{WG}}>; // and its quantized sums

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nwg, lid, {{WG}}u);
  let groups = p.K / GROUP;
  let total = groups * p.N * p.Batches;
  let live = i / WPG < total;
  let q = min(i / WPG, total - 1u); // invocations past the last group repeat it (no stores)
  let w = i % WPG; // the invocation's quant word
  let bc = q / groups; // bt N + c
  let bt = bc / p.N;
  let e = (bt % p.Ne2) * p.B.z + (bt / p.Ne2) * p.B.w + (bc % p.N) * p.B.y + group_start(q % groups) + word_elem(w);
  let lo = src1[(p.src1_off + e) >> 2u];
  let hi = src1[(p.src1_off + e + HALF) >> 2u];
  let ml = abs(lo);
  let mh = abs(hi);
  amax[lid] = vec2<f32>(max(max(ml.x, ml.y), max(ml.z, ml.w)), max(max(mh.x, mh.y), max(mh.z, mh.w)));
  workgroupBarrier();
  let g0 = lid - w; // the group's first invocation
  var m = amax[g0];
  for (var k = 1u; k < WPG; k = k + 1u) { m = max(m, amax[g0 + k]); }
#if SPLIT
  // two blocks of 32: the low and the high half's elements
#else
  m = vec2<f32>(max(m.x, m.y)); // one block of 32
#endif
  let l = round8(lo, select(0.0, 127.0 / m.x, m.x > 0.0));
  let h = round8(hi, select(0.0, 127.0 / m.y, m.y > 0.0));
  let o = 4u * q * (WPG + 1u); // the group's first word
  if (live) {
    let x = quant_word(l, h);
    for (var j = 0u; j < 4u; j = j + 1u) { dst_seti(o + 4u * w + j, x[j]); }
  }
  qsum[lid] = vec2<i32>(l.x + l.y + l.z + l.w, h.x + h.y + h.z + h.w);
  workgroupBarrier();
  if (live && w == 0u) {
    var s = qsum[lid];
    for (var k = 1u; k < WPG; k = k + 1u) { s = s + qsum[lid + k]; }
    let dl = m.x / 127.0;
    let dh = m.y / 127.0;
    let d = bitcast<vec4<i32>>(vec4<f32>(dl, dl * if32(s.x), dh, dh * if32(s.y)));
    for (var j = 0u; j < 4u; j = j + 1u) { dst_seti(o + 4u * WPG + j, d[j]); }
  }
}
