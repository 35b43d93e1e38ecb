// GROUP_NORM: one workgroup per group of channels (dim 2) of one batch (dim 3). Element j
// of a group is (j % ne0, j / ne0 % ne1, first channel + j / (ne0 ne1)). Only the last pass
// writes, each element by the invocation that reads it there, so dst may alias src0.

fn group_offset(j: u32, c0: u32, i3: u32, s: vec4<u32>) -> u32 {
  let plane = p.Ne.x * p.Ne.y;
  let r = j % plane;
  return (r % p.Ne.x) * s.x + (r / p.Ne.x) * s.y + (c0 + j / plane) * s.z + i3 * s.w;
}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let gi = group_id(wid, nwg);
  if (gi >= p.Groups * p.Ne.w) { return; }
  let i3 = gi / p.Groups;
  let c0 = (gi % p.Groups) * p.Channels;
  let n = p.Ne.x * p.Ne.y * (min(c0 + p.Channels, p.Ne.z) - c0);
  var sum = 0.0;
  for (var j = lid; j < n; j = j + {{WG}}u) { sum = sum + src0_get(group_offset(j, c0, i3, p.A)); }
  let mean = wg_sum(lid, sum) / f32(n);
  var sq = 0.0;
  for (var j = lid; j < n; j = j + {{WG}}u) { let x = src0_get(group_offset(j, c0, i3, p.A)) - mean; sq = sq + x * x; }
  let scale = 1.0 / sqrt(wg_sum(lid, sq) / f32(n) + p.Eps);
  for (var j = lid; j < n; j = j + {{WG}}u) {
    dst_set(group_offset(j, c0, i3, p.D), (src0_get(group_offset(j, c0, i3, p.A)) - mean) * scale);
  }
}
