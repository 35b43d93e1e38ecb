// MUL_MAT_ID for prompts, second step: the prompt kernel (mul_mat_big.wgsl: 128 rows by
// TN columns a workgroup, TN 128, 64 or, SLIM, 32; the same K loop) over the pairs routed to each expert, as
// mul_mat_id_map.wgsl sorted them into `route`. Workgroup (x, y) computes rows 128 x ..
// 128 x + 127 of tile y: n pairs of expert e from list position `start`, each pair's
// activations a column (b's row s % Ne11 of token t) and its results dst's row (s, t).
// A workgroup past the tiles there are ends at once.
#include mul_mat_big_tiles
var<workgroup> tile_word: u32; // route's first word of the tile, read uniformly
// An invocation's sums: RQ rows by 4 columns in each of HN groups of 64 columns.
#if SLIM
const RQ = 4u;
const HN = 1u;
#else
const RQ = 8u;
const HN = TN / 64u;
#endif

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  formats_init(lid); // tables of quantized formats
  if (lid == 0u) { tile_word = u32(route_geti(2u * wid.y)); }
  let tw = workgroupUniformLoad(&tile_word);
  let n = tw >> 16u;
  if (n == 0u) { return; }
  let e = tw & 0xffffu;
  let start = 2u * p.Tiles + u32(route_geti(2u * wid.y + 1u)); // the first pair's word
  let kbeg = 0u;
  let kend = p.K;
  let ns = (p.K + TK - 1u) / TK;
  let row0 = wid.x * 128u;
#if SLIM
  let tx = lid % 32u;
  let ty = lid / 32u;
#else
  let tx = lid % 16u;
  let ty = lid / 16u;
#endif
  // loader: invocations 0..127 load src0's tile row lr, 128..128 + TN - 1 the column of
  // pair lr
  let is_a = lid < 128u;
  let lr = lid % 128u;
  let a_row = e * p.A.z + min(row0 + lr, p.M - 1u) * p.A.y;
  let pair = u32(route_geti(start + min(lr, n - 1u)));
  let b_row = (pair % p.Ne2 % p.Ne11) * p.B.z + (pair / p.Ne2) * p.B.w;
#include mul_mat_big_loop
  // acc[HN q + h] holds row 64 (q / 4) + 4 tx + q % 4 at columns 64 h + 4 ty .. + 3.
  for (var h = 0u; h < HN; h = h + 1u) {
    for (var c = 0u; c < 4u; c = c + 1u) {
      let j = 64u * h + 4u * ty + c;
      if (j < n) {
        let pj = u32(route_geti(start + j));
        let d = (pj % p.Ne2) * p.D.z + (pj / p.Ne2) * p.D.w;
        for (var q = 0u; q < RQ; q = q + 1u) {
          let i = row0 + 64u * (q / 4u) + 4u * tx + q % 4u;
          if (i < p.M) { dst_set(d + i * p.D.x, acc[HN * q + h][c]); }
        }
      }
    }
  }
}
