// dst[i, j, b2, b3] = sum_k src0[k, i, b2 / R2, b3 / R3] * src1[k, j, b2, b3]
// One workgroup computes a TILE x TILE block of dst (i rows of src0, j rows of src1),
// staging K-slices of both operands in workgroup memory.
const TILE = 16u;
const TK = 16u;
var<workgroup> ta: array<f32, 256>; // [TILE rows of src0][TK]
var<workgroup> tb: array<f32, 256>; // [TILE rows of src1][TK]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let b = wid.z;
  let b2 = b % p.Ne2;
  let b3 = b / p.Ne2;
  let a_base = (b2 / p.R2) * p.A2 + (b3 / p.R3) * p.A3;
  let b_base = b2 * p.B2 + b3 * p.B3;
  let i = wid.x * TILE + lid.x;   // dst row index within dim 0 (src0 row)
  let j = wid.y * TILE + lid.y;   // dst column index within dim 1 (src1 row)
  let t = lid.y * TILE + lid.x;
  var acc = 0.0;
  for (var k0 = 0u; k0 < p.K; k0 = k0 + TK) {
    // load: invocation (lx, ly) loads element k0+lx of src0 row wid.x*TILE+ly and of src1 row wid.y*TILE+ly
    let kk = k0 + lid.x;
    let ar = wid.x * TILE + lid.y;
    let br = wid.y * TILE + lid.y;
    var av = 0.0;
    var bv = 0.0;
    if (kk < p.K && ar < p.M) { av = src0_get(a_base + ar * p.A1 + kk * p.A0); }
    if (kk < p.K && br < p.N) { bv = src1_get(b_base + br * p.B1 + kk * p.B0); }
    ta[lid.y * TK + lid.x] = av;
    tb[lid.y * TK + lid.x] = bv;
    workgroupBarrier();
    for (var k = 0u; k < TK; k = k + 1u) {
      acc = acc + ta[lid.x * TK + k] * tb[lid.y * TK + k];
    }
    workgroupBarrier();
  }
  if (i < p.M && j < p.N) {
    dst_set(i * p.D0 + j * p.D1 + b2 * p.D2 + b3 * p.D3, acc);
  }
}
