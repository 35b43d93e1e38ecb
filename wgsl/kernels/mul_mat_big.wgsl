// dst[i, j, b2, b3] = sum_k src0[k, i, b2 / R2, b3 / R3] * src1[k, j, b2, b3], for large
// M and N (prompts). A workgroup of 256 invocations computes a 128 x 128 block of dst,
// staging 16-wide K slices of both operands in shared memory K-major (a slice row holds
// 128 consecutive dst rows or columns), so that each invocation reads its 8 rows and 8
// columns as four 16-byte vectors per k and keeps an 8 x 8 block of sums in registers:
// rows 4 tx .. 4 tx + 3 and 64 + 4 tx .., columns 4 ty .. 4 ty + 3 and 64 + 4 ty ..
// Each invocation loads one 8-element chunk of each operand per slice: with VEC_A (VEC_B)
// in one NAME_get8 (16-byte loads, or part of a quantized block dequantized), otherwise
// element by element.
const TK = 16u;
var<workgroup> ta: array<vec4<f32>, 512>; // TK x 128 floats, K-major
var<workgroup> tb: array<vec4<f32>, 512>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  formats_init(lid); // tables of quantized formats
  let b = wid.z;
  let b2 = b % p.Ne2;
  let b3 = b / p.Ne2;
  let a_base = (b2 / p.R2) * p.A.z + (b3 / p.R3) * p.A.w;
  let b_base = b2 * p.B.z + b3 * p.B.w;
  let row0 = wid.x * 128u;
  let col0 = wid.y * 128u;
  let tx = lid % 16u;
  let ty = lid / 16u;
  // loader coordinates: one row of the tile and one 8-wide half of the K slice
  let lr = lid / 2u;
  let lc = (lid % 2u) * 8u;
  let ar = min(row0 + lr, p.M - 1u);
  let br = min(col0 + lr, p.N - 1u);
  var acc: array<vec4<f32>, 16>; // acc[4 r + c]: row group r (0..7 rows as 2 x 4), column c
  for (var k0 = 0u; k0 < p.K; k0 = k0 + TK) {
    let k = k0 + lc;
    var wa = mat2x4<f32>();
#if VEC_A
    if (k < p.K) { wa = src0_get8(a_base + ar * p.A.y + k); }
#else
    for (var e = 0u; e < 8u; e = e + 1u) {
      if (k + e < p.K) { wa[e / 4u][e % 4u] = src0_get(a_base + ar * p.A.y + (k + e) * p.A.x); }
    }
#endif
    var wb = mat2x4<f32>();
#if VEC_B
    if (k < p.K) { wb = src1_get8(b_base + br * p.B.y + k); }
#else
    for (var e = 0u; e < 8u; e = e + 1u) {
      if (k + e < p.K) { wb[e / 4u][e % 4u] = src1_get(b_base + br * p.B.y + (k + e) * p.B.x); }
    }
#endif
    // Elements k..k+7 of tile row lr go to slice rows lc..lc+7, K-major.
    for (var e = 0u; e < 8u; e = e + 1u) {
      ta[(lc + e) * 32u + lr / 4u][lr % 4u] = wa[e / 4u][e % 4u];
      tb[(lc + e) * 32u + lr / 4u][lr % 4u] = wb[e / 4u][e % 4u];
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk = kk + 1u) {
      let a0 = ta[kk * 32u + tx];
      let a1 = ta[kk * 32u + 16u + tx];
      let c0 = tb[kk * 32u + ty];
      let c1 = tb[kk * 32u + 16u + ty];
      acc[0] = fma(vec4<f32>(a0.x), c0, acc[0]);
      acc[1] = fma(vec4<f32>(a0.x), c1, acc[1]);
      acc[2] = fma(vec4<f32>(a0.y), c0, acc[2]);
      acc[3] = fma(vec4<f32>(a0.y), c1, acc[3]);
      acc[4] = fma(vec4<f32>(a0.z), c0, acc[4]);
      acc[5] = fma(vec4<f32>(a0.z), c1, acc[5]);
      acc[6] = fma(vec4<f32>(a0.w), c0, acc[6]);
      acc[7] = fma(vec4<f32>(a0.w), c1, acc[7]);
      acc[8] = fma(vec4<f32>(a1.x), c0, acc[8]);
      acc[9] = fma(vec4<f32>(a1.x), c1, acc[9]);
      acc[10] = fma(vec4<f32>(a1.y), c0, acc[10]);
      acc[11] = fma(vec4<f32>(a1.y), c1, acc[11]);
      acc[12] = fma(vec4<f32>(a1.z), c0, acc[12]);
      acc[13] = fma(vec4<f32>(a1.z), c1, acc[13]);
      acc[14] = fma(vec4<f32>(a1.w), c0, acc[14]);
      acc[15] = fma(vec4<f32>(a1.w), c1, acc[15]);
    }
    workgroupBarrier();
  }
  // acc[2 q + h] holds row 64 (q / 4) + 4 tx + q % 4 at columns 64 h + 4 ty .. + 3.
  for (var q = 0u; q < 8u; q = q + 1u) {
    let i = row0 + 64u * (q / 4u) + 4u * tx + q % 4u;
    for (var h = 0u; h < 2u; h = h + 1u) {
      for (var e = 0u; e < 4u; e = e + 1u) {
        let j = col0 + 64u * h + 4u * ty + e;
        if (i < p.M && j < p.N) {
          dst_set(offset4(vec4<u32>(i, j, b2, b3), p.D), acc[2u * q + h][e]);
        }
      }
    }
  }
}
