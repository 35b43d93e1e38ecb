// Flash attention, split KV (see flash_attn.wgsl): combines the splits' partial results of
// one dst row, [max, sum, Dv accumulators] per split in `part`, and the row's sink, and
// writes the normalised row. A split that saw no position (sum 0) adds nothing.
//
// Two forms:
//   - REG (at most {{E}} splits per lane): the workgroup is {{P}} lanes of Dv invocations,
//     invocation (lane, d) combines column d of splits lane, lane + {{P}}, ... It issues
//     every load it needs up front (each split's max, sum and column d; indices past the
//     last split clamped and their values dropped), so the dispatch waits for memory once;
//     it combines its splits relative to their own max, and after one barrier the
//     invocations of lane 0 combine the lanes' results (max, sum, column) and store.
//   - otherwise: the workgroup first finds the row's max over the splits (each invocation
//     a share of them), then each split's weight exp(m_s - max) once, into workgroup
//     memory; then each invocation adds up its columns over the splits.
// With XQ (the REG form; the fusion row flash_attn+view+mul_mat) the row is not stored
// but quantized as the integer mat-vec after the attention reads it (mul_mat_vec_q4.wgsl's
// XQ form: the attention's rows, one after another, are that product's columns), into
// `xq`: lane 0 puts the row in workgroup memory, then the workgroup quantizes it
// (xq_store_row), its rows whole groups of the layout.

#if XQ
const HALF = {{HALF}}u;
const WPG = {{WPG}}u; // quant words per group
const GROUP = 8u * WPG; // elements per group

#include mul_mat_vec_q4_quant
#include mul_mat_vec_xq_store
#endif

#if REG
var<workgroup> lane_m: array<f32, {{P}}>; // each lane's max over its splits
var<workgroup> lane_l: array<f32, {{P}}>; // each lane's sum relative to its max
var<workgroup> lane_o: array<f32, {{WG}}>; // each invocation's column relative to its lane's max

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = group_id(wid, nwg);
  if (row >= p.NHead * p.NQ * p.NSeq) { return; }
  let stride = p.Dv + 2u;
  let base = row * p.Splits * stride;
  let lane = lid / p.Dv;
  let d = lid - lane * p.Dv;
  let last = p.Splits - 1u;
  var m: array<f32, {{E}}>;
  var l: array<f32, {{E}}>;
  var a: array<f32, {{E}}>;
#for K {{E}}
  let b{{K}} = base + min(lane + {{K}}u * {{P}}u, last) * stride;
  m[{{K}}] = part_get(b{{K}});
  l[{{K}}] = part_get(b{{K}} + 1u);
  a[{{K}}] = part_get(b{{K}} + 2u + d);
#endfor
#if SINKS
  let sk = sinks_get(row % p.NHead);
#endif
  // the splits of this lane that saw a position, and their max
  var seen: array<bool, {{E}}>;
  var mx = bitcast<f32>(0xff800000u);
#for K {{E}}
  seen[{{K}}] = lane + {{K}}u * {{P}}u < p.Splits && l[{{K}}] > 0.0;
  mx = select(mx, max(mx, m[{{K}}]), seen[{{K}}]);
#endfor
  var ls = 0.0;
  var o = 0.0;
#for K {{E}}
  let w{{K}} = select(0.0, exp(m[{{K}}] - mx), seen[{{K}}]);
  ls = ls + l[{{K}}] * w{{K}};
  o = o + a[{{K}}] * w{{K}};
#endfor
  if (d == 0u) {
    lane_m[lane] = mx;
    lane_l[lane] = ls;
  }
  lane_o[lid] = o;
  workgroupBarrier();
#if XQ
  if (lane == 0u) {
#else
  if (lane != 0u) { return; }
#endif
  var mr = bitcast<f32>(0xff800000u);
  for (var i = 0u; i < {{P}}u; i = i + 1u) { mr = select(mr, max(mr, lane_m[i]), lane_l[i] > 0.0); }
#if SINKS
  mr = max(mr, sk);
#endif
  var lr = 0.0;
  var orow = 0.0;
  for (var i = 0u; i < {{P}}u; i = i + 1u) {
    let w = select(0.0, exp(lane_m[i] - mr), lane_l[i] > 0.0);
    lr = lr + lane_l[i] * w;
    orow = orow + lane_o[i * p.Dv + d] * w;
  }
#if SINKS
  lr = lr + exp(sk - mr);
#endif
#if XQ
  xq_row[d] = select(orow / lr, 0.0, lr == 0.0);
  }
  workgroupBarrier();
  xq_store_row(lid, row, p.Dv);
#else
  dst_set(row * p.Dv + d, select(orow / lr, 0.0, lr == 0.0));
#endif
}
#else
var<workgroup> wsplit: array<f32, {{MAXS}}>; // weight of each split
var<workgroup> red: array<f32, {{WG}}>;

fn is_neg_inf(x: f32) -> bool { return bitcast<u32>(x) == 0xff800000u; }

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = group_id(wid, nwg);
  if (row >= p.NHead * p.NQ * p.NSeq) { return; }
  let stride = p.Dv + 2u;
  let base = row * p.Splits * stride;
  var m = bitcast<f32>(0xff800000u);
  for (var s = lid; s < p.Splits; s = s + {{WG}}u) {
    let b = base + s * stride;
    if (part_get(b + 1u) > 0.0) { m = max(m, part_get(b)); }
  }
  red[lid] = m;
  workgroupBarrier();
  m = bitcast<f32>(0xff800000u);
  for (var i = 0u; i < {{WG}}u; i = i + 1u) { m = max(m, red[i]); }
#if SINKS
  let sk = sinks_get(row % p.NHead);
  m = max(m, sk);
#endif
  var l = 0.0;
  for (var s = lid; s < p.Splits; s = s + {{WG}}u) {
    let b = base + s * stride;
    let ls = part_get(b + 1u);
    var w = 0.0;
    if (ls > 0.0) { w = exp(part_get(b) - m); }
    wsplit[s] = w;
    l = l + ls * w;
  }
  workgroupBarrier();
  red[lid] = l;
  workgroupBarrier();
  l = 0.0;
  for (var i = 0u; i < {{WG}}u; i = i + 1u) { l = l + red[i]; }
#if SINKS
  l = l + exp(sk - m);
#endif
  let inv = select(1.0 / l, 0.0, l == 0.0);
  for (var d = lid; d < p.Dv; d = d + {{WG}}u) {
    var o = 0.0;
    for (var s = 0u; s < p.Splits; s = s + 1u) {
      let w = wsplit[s];
      if (w != 0.0) { o = o + part_get(base + s * stride + 2u + d) * w; }
    }
    dst_set(row * p.Dv + d, o * inv);
  }
}
#endif
