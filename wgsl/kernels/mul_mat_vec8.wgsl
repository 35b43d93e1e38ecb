// Matrix-vector product for few src1 columns (decode), with rows of src0 read eight
// elements at a time (16-byte loads, or an eighth group of a quantized block dequantized
// in registers), and those of src1 too with VEC1 (else element by element, with its
// strides). A workgroup computes ROWS consecutive dst rows for all NCOLS columns of one
// batch: adjacent invocations read adjacent 8-element chunks of a row, each keeps
// ROWS x NCOLS partial sums, and the workgroup adds them up in shared memory.
// With UNITS (quantized weights in rows of whole units: see NAME_get8u), the chunks go
// unit by unit: invocation lid reads eighth lid % E (E eighths per block) of every block
// of unit lid / E, the blocks in an unrolled loop, so that the compiler knows where each
// block of the unit starts within a word and reads aligned fields with one load; where
// two eighths of a block read the same words (wgsl.Format.PairDistance), one invocation
// takes both.
// dst[i, j, b2, b3] = sum_k src0[k, i, b2 / R2, b3 / R3] * src1[k, j, b2, b3]
// With SRC0B, a second matrix `src0b` (same shape and strides as src0) is multiplied by
// the same src1, sharing the reads of src1 and the reduction: with GLU the kernel stores
// silu(src0 . src1) * (src0b . src1) (llama's gate, up and SWIGLU in one). (Independent
// products of one src1, llama's Q, K and V projections, are mul_mat_multi.wgsl.)
// With IDS (MUL_MAT_ID), the batch is a (slot, token) pair and ids picks its expert's matrix.
// With TWO (weights read eight elements at a time, not by units) each loop turn takes two
// chunks of the row (see matVecTwoMinK).
const ROWS = {{ROWS}}u;
const NCOLS = {{NCOLS}}u;
const OUTS = {{ROWS}}u * {{NCOLS}}u; // results per workgroup
#include mul_mat_vec_sum
#include mul_mat_vec_rows
const ACC = {{ACC}}u; // OUTS, twice that with SRC0B
#if UNITS
const E = src0_BLOCK_EIGHTHS;
#if PAIR
// Eighths s and s + D of a block read the same words (wgsl.Format.PairDistance): one
// invocation takes both.
const D = {{SRC0_PAIR}}u;
const LANES = E / 2u; // invocations per block
#else
const LANES = E;
#endif
#endif

#if VEC1
#else
// Elements i, i + B.x, ..., i + 7 B.x of src1.
fn src1_strided8(i: u32) -> mat2x4<f32> {
  let s = p.B.x;
  return mat2x4<f32>(vec4<f32>(src1_get(i), src1_get(i + s), src1_get(i + 2u * s), src1_get(i + 3u * s)),
                     vec4<f32>(src1_get(i + 4u * s), src1_get(i + 5u * s), src1_get(i + 6u * s), src1_get(i + 7u * s)));
}
#endif

// Adds the products of elements k..k+7 of the ROWS rows from i0 (src0 row base a) and of
// the NCOLS columns of src1 (base v) to the partial sums.
fn step8(acc: ptr<function, array<f32, {{ACC}}>>, a: u32, i0: u32, v: u32, k: u32) {
  var x: array<mat2x4<f32>, {{NCOLS}}>;
#if VEC1
  for (var j = 0u; j < NCOLS; j = j + 1u) { x[j] = src1_get8(v + j * p.B.y + k); }
#else
  for (var j = 0u; j < NCOLS; j = j + 1u) { x[j] = src1_strided8(v + j * p.B.y + k * p.B.x); }
#endif
  for (var r = 0u; r < ROWS; r = r + 1u) {
    let row = a + min(i0 + r, p.M - 1u) * p.A.y + k;
    let w = src0_get8(row);
#if SRC0B
    let u = src0b_get8(row);
#endif
    for (var j = 0u; j < NCOLS; j = j + 1u) {
      (*acc)[r * NCOLS + j] = (*acc)[r * NCOLS + j] + dot(w[0], x[j][0]) + dot(w[1], x[j][1]);
#if SRC0B
      (*acc)[OUTS + r * NCOLS + j] = (*acc)[OUTS + r * NCOLS + j] + dot(u[0], x[j][0]) + dot(u[1], x[j][1]);
#endif
    }
  }
}

#if UNITS
// Adds the products of eighth s of block blk (a literal) of the unit at element k of the
// ROWS rows from i0.
fn stepu(acc: ptr<function, array<f32, {{ACC}}>>, a: u32, i0: u32, v: u32, k: u32, blk: u32, s: u32) {
  let c = k + blk * src0_BLOCK_ELEMS + 8u * s; // the chunk's first element
  var x: array<mat2x4<f32>, {{NCOLS}}>;
#if VEC1
  for (var j = 0u; j < NCOLS; j = j + 1u) { x[j] = src1_get8(v + j * p.B.y + c); }
#else
  for (var j = 0u; j < NCOLS; j = j + 1u) { x[j] = src1_strided8(v + j * p.B.y + c * p.B.x); }
#endif
#if PAIR
  var x2: array<mat2x4<f32>, {{NCOLS}}>; // the partner chunk, 8 D elements on
#if VEC1
  for (var j = 0u; j < NCOLS; j = j + 1u) { x2[j] = src1_get8(v + j * p.B.y + c + 8u * D); }
#else
  for (var j = 0u; j < NCOLS; j = j + 1u) { x2[j] = src1_strided8(v + j * p.B.y + (c + 8u * D) * p.B.x); }
#endif
#endif
  for (var r = 0u; r < ROWS; r = r + 1u) {
    let row = a + min(i0 + r, p.M - 1u) * p.A.y + k;
    let wa = src0_unit_word(row);
    let w = src0_get8u(wa, blk, s);
#if SRC0B
    let ua = src0b_unit_word(row);
    let u = src0b_get8u(ua, blk, s);
#endif
#if PAIR
    let w2 = src0_get8u(wa, blk, s + D);
#if SRC0B
    let u2 = src0b_get8u(ua, blk, s + D);
#endif
#endif
    for (var j = 0u; j < NCOLS; j = j + 1u) {
      var y = dot(w[0], x[j][0]) + dot(w[1], x[j][1]);
#if PAIR
      y = y + dot(w2[0], x2[j][0]) + dot(w2[1], x2[j][1]);
#endif
      (*acc)[r * NCOLS + j] = (*acc)[r * NCOLS + j] + y;
#if SRC0B
      var z = dot(u[0], x[j][0]) + dot(u[1], x[j][1]);
#if PAIR
      z = z + dot(u2[0], x2[j][0]) + dot(u2[1], x2[j][1]);
#endif
      (*acc)[OUTS + r * NCOLS + j] = (*acc)[OUTS + r * NCOLS + j] + z;
#endif
    }
  }
}
#endif

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  formats_init(lid); // tables of quantized formats
#include mul_mat_vec_begin
#if IDS
  let ev = mv_expert(b2, b3);
  let a = ev.x;
  let v = ev.y;
#else
  let a = (b2 / p.R2) * p.A.z + (b3 / p.R3) * p.A.w;
  let v = b2 * p.B.z + b3 * p.B.w;
#endif
  var acc: array<f32, {{ACC}}>;
#if UNITS
  let t = lid % LANES;
#if PAIR
  let s = (t / D) * 2u * D + t % D; // the first of a pair
#else
  let s = t;
#endif
  for (var k = (lid / LANES) * src0_UNIT_ELEMS; k < p.K; k = k + ({{WG}}u / LANES) * src0_UNIT_ELEMS) {
#for B {{SRC0_UNIT_BLOCKS}}
    stepu(&acc, a, i0, v, k, {{B}}u, s);
#endfor
  }
#else
#if TWO
  // Two chunks a turn, so that the loads of both go out before either's products.
  var k = lid * 8u;
  for (; k + {{WG}}u * 8u < p.K; k = k + {{WG}}u * 16u) {
    step8(&acc, a, i0, v, k);
    step8(&acc, a, i0, v, k + {{WG}}u * 8u);
  }
  if (k < p.K) { step8(&acc, a, i0, v, k); }
#else
  for (var k = lid * 8u; k < p.K; k = k + {{WG}}u * 8u) {
    step8(&acc, a, i0, v, k);
  }
#endif
#endif
  sum_partials(lid, &acc);
  if (lid < OUTS) {
    let i = i0 + lid / NCOLS;
    let j = lid % NCOLS;
    var y = red[lid * {{WG}}u];
#if GLU
    y = silu(y) * red[(OUTS + lid) * {{WG}}u];
#endif
    if (i < p.M) {
      let o = offset4(vec4<u32>(i, j, b2, b3), p.D);
      dst_set(o, y);
    }
  }
}
