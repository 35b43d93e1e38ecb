// dst = softmax(src0 * scale + slope * mask) over each row; one workgroup per row. With
// SINKS, the head's sink logit sinks[i2] joins the row's maximum and sum (not its outputs).
// The mask row is broadcast: mask[j, i1 % Me.y, i2 % Me.z, i3 % Me.w].

#include soft_max_row

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = group_id(wid, nwg);
  if (row >= p.Rows) { return; }
  let c = row_coords(row, p.Ne);
  let a = offset4(c, p.A);
  let d = offset4(c, p.D);
  // ALiBi: slope m0^(h+1) for the first NHeadLog2 heads, m1^(2(h-NHeadLog2)+1) after; the
  // bases come as their log2 (0 without ALiBi). No branch on a parameter here: lavapipe
  // recompiled the masked kernel on every dispatch when the slope was under an if.
  let h = c.z;
  let slope = exp2(select(p.L1 * f32(2u * (h - p.NHeadLog2) + 1u), p.L0 * f32(h + 1u), h < p.NHeadLog2));
  var m = 0u;
#if MASK
  m = offset4(c % p.Me, p.M);
#endif
  // As ggml's CPU: no special case for infinities or NaN. A NaN or a +Inf in the row, or
  // a row that is all -Inf (fully masked), makes the sum NaN and so the whole row NaN.
  var mx = row_max(lid, p.Ne.x, a, m, slope);
#if SINKS
  let sink = sinks_get(c.z * p.K);
  mx = max(mx, sink);
#endif
  var total = row_sum(lid, p.Ne.x, a, m, slope, mx);
#if SINKS
  total = total + exp(sink - mx);
#endif
  let inv = 1.0 / total;
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) {
    dst_set(d + j * p.D.x, exp(logit(a, m, j, slope) - mx) * inv);
  }
}
