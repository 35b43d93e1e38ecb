// Flash attention, split KV (see flash_attn.wgsl): combines the splits' partial results of
// one dst row, [max, sum, Dv accumulators] per split in `part`, and the row's sink, and
// writes the normalised row. A split that saw no position (sum 0) adds nothing.
// The workgroup first finds the row's max over the splits (each invocation a share of
// them), then each split's weight exp(m_s - max) once, into workgroup memory; then each
// invocation adds up its columns over the splits.

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
