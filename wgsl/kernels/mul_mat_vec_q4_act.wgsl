// The columns of an integer mat-vec (mul_mat_vec_q4.wgsl with XQ) quantized once, for
// every workgroup of the product, into scratch memory (xq, i32 words): WPG invocations per
// group of 8 * WPG elements of each of the N src1 columns of each batch, one quant word
// each (layout and scales: mul_mat_vec_q4_quant.wgsl; the exchange and stores:
// mul_mat_vec_xq_store.wgsl). Group q of column c of batch bt is group (bt N + c) K /
// GROUP + q of xq. (One invocation per group, reading all its elements in turn, left the
// GPU mostly idle.)
const HALF = {{HALF}}u;
const WPG = {{WPG}}u; // quant words per group
const GROUP = 8u * WPG; // elements per group

#include mul_mat_vec_q4_quant
#include mul_mat_vec_xq_store

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
  xq_store(lid, w, q, lo, hi, live);
}
