// MUL_MAT_ID, rows grouped per expert: dst[i, s, t] = sum_k src0[k, i, e] * src1[k, s % Ne11, t]
// for e = ids[s, t]. Workgroup (x, y) owns rows 64x..64x+63 of expert y's matrix. It scans
// ids WG pairs (s, t) at a time and appends those routed to its expert to `rows` (in
// workgroup memory, order unimportant: each pair is one dst row); whenever 64 are held, or
// the scan is over, it multiplies them as the columns of one 64 x 64 tile, as MUL_MAT's
// tiled kernel does (mul_mat.wgsl: 32-wide K slices in shared memory, 4 x 4 sums per
// invocation), then keeps the pairs beyond the first 64 for the next tile.
const TM = 64u;
const TK = 32u;
const LD = 33u; // padded row length in shared memory
var<workgroup> ta: array<f32, 2112>; // TM * LD
var<workgroup> tb: array<f32, 2112>;
// Pairs routed to this expert, as s + t * Ne2: fewer than TM before a scan step, which adds
// at most 256 (the workgroup).
var<workgroup> rows: array<u32, 320>; // TM + 256
var<workgroup> held: atomic<u32>;
var<workgroup> held_now: u32; // a copy of held that the workgroup reads uniformly

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  formats_init(lid); // tables of quantized formats
  let e = wid.y;
  let row0 = wid.x * TM;
  let pairs = p.Batches;
  let tx = lid % 16u;
  let ty = lid / 16u;
  let lr = lid / 4u;
  let lc = (lid % 4u) * 8u;
  let ar = min(row0 + lr, p.M - 1u);
  let a_base = e * p.A.z + ar * p.A.y;
  if (lid == 0u) {
    atomicStore(&held, 0u);
    held_now = 0u;
  }
  var pos = 0u;
  loop {
    // Gather until a tile's worth of pairs is held or ids are exhausted.
    var n = workgroupUniformLoad(&held_now);
    loop {
      if (n >= TM || pos >= pairs) { break; }
      let r = pos + lid;
      if (r < pairs) {
        let s = r % p.Ne2;
        let t = r / p.Ne2;
        if (ids_geti(s * p.I.x + t * p.I.y) == i32(e)) {
          rows[atomicAdd(&held, 1u)] = r;
        }
      }
      pos = pos + 256u;
      workgroupBarrier();
      if (lid == 0u) { held_now = atomicLoad(&held); }
      n = workgroupUniformLoad(&held_now);
    }
    if (n == 0u) { break; }
    let cols = min(n, TM);
    // This invocation loads the column of pair rows[lr] (the last one past cols).
    let lpair = rows[min(lr, cols - 1u)];
    let b_base = (lpair % p.Ne2 % p.Ne11) * p.B.z + (lpair / p.Ne2) * p.B.w;
    // Zeroed explicitly: a declaration inside a loop is not re-initialised on every pass
    // by every compiler.
    var acc: array<f32, 16>;
    for (var c = 0u; c < 16u; c = c + 1u) { acc[c] = 0.0; }
    for (var k0 = 0u; k0 < p.K; k0 = k0 + TK) {
      let k = k0 + lc;
#if VEC_A
      var wa = mat2x4<f32>();
      if (k < p.K) { wa = src0_get8(a_base + k); }
      for (var c = 0u; c < 4u; c = c + 1u) {
        ta[lr * LD + lc + c] = wa[0][c];
        ta[lr * LD + lc + 4u + c] = wa[1][c];
      }
#else
      for (var c = 0u; c < 8u; c = c + 1u) {
        var va = 0.0;
        if (k + c < p.K) { va = src0_get(a_base + (k + c) * p.A.x); }
        ta[lr * LD + lc + c] = va;
      }
#endif
#if VEC_B
      var wb = mat2x4<f32>();
      if (k < p.K) { wb = src1_get8(b_base + k); }
      for (var c = 0u; c < 4u; c = c + 1u) {
        tb[lr * LD + lc + c] = wb[0][c];
        tb[lr * LD + lc + 4u + c] = wb[1][c];
      }
#else
      for (var c = 0u; c < 8u; c = c + 1u) {
        var vb = 0.0;
        if (k + c < p.K) { vb = src1_get(b_base + (k + c) * p.B.x); }
        tb[lr * LD + lc + c] = vb;
      }
#endif
      workgroupBarrier();
      for (var kk = 0u; kk < TK; kk = kk + 1u) {
        let a0 = ta[tx * LD + kk];
        let a1 = ta[(tx + 16u) * LD + kk];
        let a2 = ta[(tx + 32u) * LD + kk];
        let a3 = ta[(tx + 48u) * LD + kk];
        for (var c = 0u; c < 4u; c = c + 1u) {
          let bv = tb[(ty + 16u * c) * LD + kk];
          acc[c] = acc[c] + a0 * bv;
          acc[4u + c] = acc[4u + c] + a1 * bv;
          acc[8u + c] = acc[8u + c] + a2 * bv;
          acc[12u + c] = acc[12u + c] + a3 * bv;
        }
      }
      workgroupBarrier();
    }
    for (var c = 0u; c < 4u; c = c + 1u) {
      let j = ty + 16u * c;
      if (j < cols) {
        let pair = rows[j];
        let d = (pair % p.Ne2) * p.D.z + (pair / p.Ne2) * p.D.w;
        for (var r = 0u; r < 4u; r = r + 1u) {
          let i = row0 + tx + 16u * r;
          if (i < p.M) { dst_set(d + i * p.D.x, acc[r * 4u + c]); }
        }
      }
    }
    // Keep the pairs beyond this tile for the next one.
    let rest = n - cols;
    var kept = 0u;
    if (lid < rest) { kept = rows[TM + lid]; }
    workgroupBarrier();
    if (lid < rest) { rows[lid] = kept; }
    if (lid == 0u) {
      atomicStore(&held, rest);
      held_now = rest;
    }
  }
}
