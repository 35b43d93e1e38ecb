// Split-K MUL_MAT (mul_mat_big with SPLITK): dst element (i, j, b) is the sum of the
// SPLITS partial sums part[i, j, b, s] ([M, N, batches, SPLITS], contiguous), stored at
// dst row Row0 + i.

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let idx = group_id(wid, nwg) * {{WG}}u + lid;
  let total = p.M * p.N * p.Batches;
  if (idx >= total) { return; }
  var sum = 0.0;
  for (var s = 0u; s < {{SPLITS}}u; s = s + 1u) {
    sum = sum + part_get(s * total + idx);
  }
  let i = idx % p.M;
  let j = (idx / p.M) % p.N;
  let b = idx / (p.M * p.N);
  dst_set(offset4(vec4<u32>(p.Row0 + i, j, b % p.Ne2, b / p.Ne2), p.D), sum);
}
