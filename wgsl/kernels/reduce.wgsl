// Reductions of src0 (shape p.Ne, strides p.A), one workgroup per row:
//   SUM     dst[0, i1, i2, i3] = sum of row (i1, i2, i3)
//   MEAN    that sum / ne0
//   ARGMAX  dst[row] = the index of the row's largest value (the last of equal ones)
//   TOTAL   dst[0] = sum of every element (a single workgroup)

#if ARGMAX
var<workgroup> red_v: array<f32, {{WG}}>;
var<workgroup> red_i: array<u32, {{WG}}>;
#endif

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
#if TOTAL
  var s = 0.0;
  for (var i = lid; i < p.N; i = i + {{WG}}u) { s = s + src0_get(offset4(coords(i, p.Ne), p.A)); }
  s = wg_sum(lid, s);
  if (lid == 0u) { dst_set(0u, s); }
#else
  let row = group_id(wid, nwg);
  if (row >= p.Rows) { return; }
  let c = row_coords(row, p.Ne);
  let a = offset4(c, p.A);
  let d = offset4(c, p.D);
#if ARGMAX
  var best = bitcast<f32>(0xff800000u); // -Inf
  var at = 0u;
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) {
    let v = src0_get(a + j * p.A.x);
    if (v >= best) { best = v; at = j; }
  }
  red_v[lid] = best;
  red_i[lid] = at;
  workgroupBarrier();
  for (var s = {{WG}}u / 2u; s > 0u; s = s / 2u) {
    if (lid < s) {
      let v = red_v[lid + s];
      let i = red_i[lid + s];
      if (v > red_v[lid] || (v == red_v[lid] && i > red_i[lid])) {
        red_v[lid] = v;
        red_i[lid] = i;
      }
    }
    workgroupBarrier();
  }
  if (lid == 0u) { dst_seti(d, i32(red_i[0])); }
#else
  var s = 0.0;
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { s = s + src0_get(a + j * p.A.x); }
  s = wg_sum(lid, s);
#if MEAN
  s = s / f32(p.Ne.x);
#endif
  if (lid == 0u) { dst_set(d, s); }
#endif
#endif
}
