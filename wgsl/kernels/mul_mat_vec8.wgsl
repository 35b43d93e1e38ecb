// Matrix-vector product for few src1 columns (decode), with rows of src0 read eight
// elements at a time (16-byte loads, or a quarter of a quantized block dequantized in
// registers), and those of src1 too with VEC1 (else element by element, with its
// strides). A workgroup is TEAMS teams of TPR invocations; a team computes ROWS
// consecutive dst rows for all NCOLS columns of one batch: its invocations take turns
// over the units of a row (8 elements; with UNITS a quantized unit, whole blocks that
// fill whole words, dequantized with every field at a constant place: NAME_get8u), each
// keeps ROWS x NCOLS partial sums, and the team adds them up in shared memory.
// dst[i, j, b2, b3] = sum_k src0[k, i, b2 / R2, b3 / R3] * src1[k, j, b2, b3]
// With GLU, a second matrix `up` (same shape and strides) is multiplied by the same src1
// and the kernel stores silu(src0 . src1) * (up . src1): llama's gate, up and SWIGLU in one.
// With IDS (MUL_MAT_ID), the batch is a (slot, token) pair and ids picks its expert's matrix.
const ROWS = {{ROWS}}u;
const NCOLS = {{NCOLS}}u;
const OUTS = {{ROWS}}u * {{NCOLS}}u; // results per team
var<workgroup> red: array<f32, {{RED}}>; // ACC * WG
const ACC = {{ACC}}u; // OUTS, twice that with GLU
const TPR = {{TPR}}u; // invocations per team
const TEAMS = {{WG}}u / TPR;
#if UNITS
const UNIT = src0_UNIT_ELEMS;
#else
const UNIT = 8u;
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
#if GLU
    let u = up_get8(row);
#endif
    for (var j = 0u; j < NCOLS; j = j + 1u) {
      (*acc)[r * NCOLS + j] = (*acc)[r * NCOLS + j] + dot(w[0], x[j][0]) + dot(w[1], x[j][1]);
#if GLU
      (*acc)[OUTS + r * NCOLS + j] = (*acc)[OUTS + r * NCOLS + j] + dot(u[0], x[j][0]) + dot(u[1], x[j][1]);
#endif
    }
  }
}

#if UNITS
// Adds the products of elements 8g..8g+7 of the unit at element k of the ROWS rows from i0
// (g a literal: see NAME_get8u).
fn stepu(acc: ptr<function, array<f32, {{ACC}}>>, a: u32, i0: u32, v: u32, k: u32, g: u32) {
  var x: array<mat2x4<f32>, {{NCOLS}}>;
#if VEC1
  for (var j = 0u; j < NCOLS; j = j + 1u) { x[j] = src1_get8(v + j * p.B.y + k + 8u * g); }
#else
  for (var j = 0u; j < NCOLS; j = j + 1u) { x[j] = src1_strided8(v + j * p.B.y + (k + 8u * g) * p.B.x); }
#endif
  for (var r = 0u; r < ROWS; r = r + 1u) {
    let row = a + min(i0 + r, p.M - 1u) * p.A.y + k;
    let w = src0_get8u(src0_unit_word(row), g);
#if GLU
    let u = up_get8u(up_unit_word(row), g);
#endif
    for (var j = 0u; j < NCOLS; j = j + 1u) {
      (*acc)[r * NCOLS + j] = (*acc)[r * NCOLS + j] + dot(w[0], x[j][0]) + dot(w[1], x[j][1]);
#if GLU
      (*acc)[OUTS + r * NCOLS + j] = (*acc)[OUTS + r * NCOLS + j] + dot(u[0], x[j][0]) + dot(u[1], x[j][1]);
#endif
    }
  }
}
#endif

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  formats_init(lid); // tables of quantized formats
  let g = group_id(wid, nwg);
  let lane = lid % TPR;
  let team = lid / TPR;
  let blocks = (p.M + ROWS * TEAMS - 1u) / (ROWS * TEAMS);
  if (g >= blocks * p.Batches) { return; }
  let i0 = (g % blocks) * ROWS * TEAMS + team * ROWS;
  let b = g / blocks;
  let b2 = b % p.Ne2;
  let b3 = b / p.Ne2;
#if IDS
  // MUL_MAT_ID: b2 is the slot, b3 the token; the pair's expert (clamped: ggml asserts it
  // is in range) picks the matrix, b's row s % Ne11 of token b3 the vector.
  let e = min(u32(max(ids_geti(b2 * p.I.x + b3 * p.I.y), 0)), p.Experts - 1u);
  let a = e * p.A.z;
  let v = (b2 % p.Ne11) * p.B.z + b3 * p.B.w;
#else
  let a = (b2 / p.R2) * p.A.z + (b3 / p.R3) * p.A.w;
  let v = b2 * p.B.z + b3 * p.B.w;
#endif
  var acc: array<f32, {{ACC}}>;
  for (var k = lane * UNIT; k < p.K; k = k + TPR * UNIT) {
#if UNITS
#for G {{SRC0_UNIT_GROUPS}}
    stepu(&acc, a, i0, v, k, {{G}}u);
#endfor
#else
    step8(&acc, a, i0, v, k);
#endif
  }
  for (var o = 0u; o < ACC; o = o + 1u) { red[o * {{WG}}u + lid] = acc[o]; }
  workgroupBarrier();
  for (var s = TPR / 2u; s > 0u; s = s / 2u) {
    if (lane < s) {
      for (var o = 0u; o < ACC; o = o + 1u) { red[o * {{WG}}u + lid] = red[o * {{WG}}u + lid] + red[o * {{WG}}u + lid + s]; }
    }
    workgroupBarrier();
  }
  // Team t's sums are at its first invocation, t TPR.
  for (var q = lid; q < TEAMS * OUTS; q = q + {{WG}}u) {
    let t = q / OUTS;
    let o = q % OUTS;
    let i = (g % blocks) * ROWS * TEAMS + t * ROWS + o / NCOLS;
    let j = o % NCOLS;
    var y = red[o * {{WG}}u + t * TPR];
#if GLU
    y = silu(y) * red[(OUTS + o) * {{WG}}u + t * TPR];
#endif
    if (i < p.M) { dst_set(offset4(vec4<u32>(i, j, b2, b3), p.D), y); }
  }
}
