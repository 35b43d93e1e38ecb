// Matrix-vector product for few src1 columns: one workgroup per dst element row chunk.
// dst[i, j, b2, b3] = sum_k src0[k, i, b2 / R2, b3 / R3] * src1[k, j, b2, b3]
@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = group_id(wid, nwg);
  if (g >= p.M * p.N * p.Batches) { return; }
  let i = g % p.M;
  let r = g / p.M;
  let j = r % p.N;
  let b = r / p.N;
  let b2 = b % p.Ne2;
  let b3 = b / p.Ne2;
  let a = (b2 / p.R2) * p.A.z + (b3 / p.R3) * p.A.w + i * p.A.y;
  let v = b2 * p.B.z + b3 * p.B.w + j * p.B.y;
  var acc = 0.0;
  for (var k = lid; k < p.K; k = k + {{WG}}u) {
    acc = acc + src0_get(a + k * p.A.x) * src1_get(v + k * p.B.x);
  }
  let sum = wg_sum(lid, acc);
  if (lid == 0u) { dst_set(offset4(vec4<u32>(i, j, b2, b3), p.D), sum); }
}
