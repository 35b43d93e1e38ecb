// dst[i, j, b2, b3] = sum_k src0[k, i, b2 / R2, b3 / R3] * src1[k, j, b2, b3], for large
// M and N (prompts). A workgroup of 256 invocations computes a 128 x 128 block of dst;
// each invocation keeps an 8 x 8 block of sums in registers: rows 4 tx .. 4 tx + 3 and
// 64 + 4 tx .., columns 4 ty .. 4 ty + 3 and 64 + 4 ty ..
// K goes by 8-wide slices staged in shared memory K-major (a slice row holds 128
// consecutive dst rows or columns, read as 16-byte vectors), two buffers per operand so
// that one barrier per slice suffices: the slice written is the one read before the
// previous barrier. The next slice is prefetched: its global loads (and the
// dequantization of a quantized src0, by the format's NAME_get8) are issued into registers
// before the products of the current slice, and written to shared memory after them. With
// RAW_A (F16 src0 read eight elements at a time) the words stay raw in wr until they are
// staged, so that the invocations loading them do not wait for the loads before the
// products (their conversion to floats would). Half
// of the invocations load src0, the other half src1: one 8-element chunk of one tile row
// each per slice (with VEC_A / VEC_B in one NAME_get8, otherwise element by element).
// Loads past the K range (or the split's) are zero.
// Rows are those of src0 (M of them); dst row Row0 + i holds row i (Row0 > 0: a chunk of
// dequantized weights, ops/mul_mat_dequant.go).
//   - SPLITK: workgroup z is batch * SPLITS + split; the split sums its KPER-wide part of
//     K (a multiple of TK) and stores the partial block to `part` ([M, N, batches,
//     SPLITS]); mul_mat_big_reduce adds the splits into dst.
#include mul_mat_big_tiles

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  formats_init(lid); // tables of quantized formats
#if SPLITK
  let b = wid.z / {{SPLITS}}u;
  let split = wid.z % {{SPLITS}}u;
  let kbeg = split * {{KPER}}u;
  let kend = min(p.K, kbeg + {{KPER}}u);
#else
  let b = wid.z;
  let kbeg = 0u;
  let kend = p.K;
#endif
  let ns = select(0u, (kend - kbeg + TK - 1u) / TK, kend > kbeg); // slices
  let b2 = b % p.Ne2;
  let b3 = b / p.Ne2;
  let a_base = (b2 / p.R2) * p.A.z + (b3 / p.R3) * p.A.w;
  let b_base = b2 * p.B.z + b3 * p.B.w;
  let row0 = wid.x * 128u;
  let col0 = wid.y * TN;
  let tx = lid % 16u;
  let ty = lid / 16u;
  // loader: invocations 0..127 load src0's tile row lr, 128..128 + TN - 1 src1's
  let is_a = lid < 128u;
  let lr = lid % 128u;
  let a_row = a_base + min(row0 + lr, p.M - 1u) * p.A.y;
  let b_row = b_base + min(col0 + lr, p.N - 1u) * p.B.y;
#include mul_mat_big_loop
  // acc[(TN / 64) q + h] holds row 64 (q / 4) + 4 tx + q % 4 at columns 64 h + 4 ty .. + 3.
  for (var q = 0u; q < 8u; q = q + 1u) {
    let i = row0 + 64u * (q / 4u) + 4u * tx + q % 4u;
    for (var h = 0u; h < TN / 64u; h = h + 1u) {
      for (var e = 0u; e < 4u; e = e + 1u) {
        let j = col0 + 64u * h + 4u * ty + e;
        if (i < p.M && j < p.N) {
#if SPLITK
          part_set(((split * p.Batches + b) * p.N + j) * p.M + i, acc[(TN / 64u) * q + h][e]);
#else
          dst_set(offset4(vec4<u32>(p.Row0 + i, j, b2, b3), p.D), acc[(TN / 64u) * q + h][e]);
#endif
        }
      }
    }
  }
}
