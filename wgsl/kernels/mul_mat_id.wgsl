// MUL_MAT_ID, rows grouped per expert: dst[i, s, t] = sum_k src0[k, i, e] * src1[k, s % Ne11, t]
// for e = ids[s, t]. Workgroup (x, y) owns rows 64x..64x+63 of expert y's matrix. It scans
// ids WG pairs (s, t) at a time and appends those routed to its expert to `rows` (in
// workgroup memory, order unimportant: each pair is one dst row); whenever 64 are held, or
// the scan is over, it multiplies them as the columns of one 64 x 64 tile, as MUL_MAT's
// tiled kernel does (the shared K loop of mul_mat_slice.wgsl: 32-wide K slices, 4 x 4 sums per
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
  let a_row = e * p.A.z + ar * p.A.y;
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
    let b_row = (lpair % p.Ne2 % p.Ne11) * p.B.z + (lpair / p.Ne2) * p.B.w;
    // Zeroed explicitly: a declaration inside a loop is not re-initialised on every pass
    // by every compiler.
    var acc: array<f32, 16>;
    for (var c = 0u; c < 16u; c = c + 1u) { acc[c] = 0.0; }
#include mul_mat_slice
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
