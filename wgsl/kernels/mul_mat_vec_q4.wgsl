// Matrix-vector product of 4-bit weights (the nibble formats: wgsl/nibbles.go, MXFP4's
// codes made integers by FP4, IQ4_NL's levels looked up by LEVELS, Q5_K's, Q5_0's and
// Q5_1's fifth bits added by HBIT (HWORD: one word a block), once for all columns by
// LANES; Q6_K in its Q6K form, below) and of Q8_0's bytes (BYTES: byte_dot) by one src1
// column, with
// integer dot products two weights at a time in the 16-bit lanes of an i32 (SWAR).
// dst[i, 0, b2, b3] = sum_k src0[k, i, b2 / R2, b3 / R3] * src1[k, 0, b2, b3]
// Each invocation quantizes the activations of the groups it takes, in registers, to 8
// bits per block of 32 (mul_mat_vec_q4_quant.wgsl: words X(a, c) = xq[c] + xq[a] * 65536
// in the weights' nibble order, and per group (dl, sl, dh, sh), sx = dx * sum xq), shared by
// the ROWS rows (of every matrix) it computes. With XQ the column comes quantized instead,
// by a dispatch of its own (mul_mat_vec_q4_act.wgsl) into scratch memory (xq), once for
// every workgroup, so that a workgroup can take few rows: on an H100 (µs, weights beyond
// the L2 cache, 2 rows a workgroup, the kernel alone) Q4_K 14336 x 4096 20.5 against 30.3,
// 4096 x 14336 20.8 against 29.4, the gate form 14336 x 4096 34.3 against 68.1
// (ggml-vulkan 23.6, 26.0, 54.2). That dispatch cost ~10 µs when it took one invocation a
// group (a dependent dispatch, ~5 µs on that GPU, and that invocation's work), which the
// gate form's two matrices repaid and single products did not; it now takes an invocation
// a quant word (ops/mul_mat_vec_q4.go). With XQ the kernel also
// takes NCOLS > 1 src1 columns (the nibble formats): each weight word's nibbles are masked
// once for every column, each column's quantized group read in turn (xq holds a batch's
// columns one after another).
// A workgroup computes ROWS consecutive rows: invocations take tasks (a unit of Q4_0's
// two blocks, one group otherwise) interleaved along the row, each for all ROWS rows.
// Weight word w masked by 0x000F000F (after shifts of 0, 8, 4, 12) holds two weights
// q0 + q1 * 65536; its product with X(a, c) is q0 xq[c] + (q0 xq[a] + q1 xq[c]) 65536 +
// q1 xq[a] 2^32: in wrapping i32 arithmetic the upper half holds the two-element dot
// product over a borrow from the lower half. Up to 8 such products accumulate exactly
// (swar_dot); then the group's integer dot turns into a float once, under the
// sub-block's affine map (scale, offset): scale * dx * dot + offset * sx.
// With IDS (MUL_MAT_ID, one column quantized in the kernel, never XQ) the batch is a
// (slot, token) pair and ids picks its expert's matrix.
// With SRC0B (GLU) a second matrix src0b of the same format, shape and strides (the
// feed-forward's up projection) is multiplied by the same activations, and the kernel
// stores silu(src0 . src1) * (src0b . src1).
// With MULTI (XQ) the dispatch computes PRODUCTS independent products of the NCOLS
// columns (llama's Q, V and K projections: the fusion row add+norm+mul+qkv), the weights
// src0, src0b and src0c (one format and row length, each its own rows p.Ms[m] and row
// stride p.As[m]) into dst, dstb and dstc: workgroups p.Start[m] .. p.Start[m + 1] - 1
// compute product m, whose task loop is its own instantiation (m a literal), so that
// the matrix's accessors are chosen when the kernel is compiled.
// With ROPE_KV (MULTI of three products, two rows a workgroup) the products are llama's
// Q, K and V projections (products ROLE_Q, ROLE_K and ROLE_V) stored as the KV store after
// them would (the fusion row add+norm+mul+qkv+rope+set_rows; rope_kv_store.wgsl).
// With Q6K the weights are Q6_K's (wgsl/q6k.go): a group is the 64 elements of runs p and
// p + 2 (HALF = 64 apart) of one half h of a block (its group index 2 h + p), whose 6-bit
// weights are the low and high nibbles of 8 ql words with bits 2p.. and 2p + 4.. of 8 qh
// words (shared by the groups p = 0 and 1), taken in signed lanes: the masked word less
// 0x00200020 is (q0 - 32) + (q1 - 32) 65536, whose products with X add at most
// 2 * 32 * 127 = 8128 to the dot's magnitude, so that 4 of them accumulate exactly. Its
// four sub-blocks of 16 elements (the two runs' l < 16 and l >= 16) each have their scale:
// four integer dots per group, each one float multiply-add under its scale (no offset).
// Tasks are single groups; the block's byte is computed (Q6_K rows need not start on
// word boundaries: the blocks of 210 bytes alternate between two alignments). With COLS
// (XQ, NCOLS > 1) each row's words are put in lanes once (q6_lanes), held for the ROWS
// rows, and multiplied by every column's group in turn (q6_group_cols).
const ROWS = {{ROWS}}u;
const NCOLS = {{NCOLS}}u; // src1 columns (more than one only with XQ)
const HALF = {{HALF}}u;
const WPG = {{WPG}}u; // quant words per group
const GROUP = 8u * WPG; // elements per group
#if Q6K
const TASK = GROUP;
#else
const TASK = {{SRC0_UNIT_BLOCKS}}u * GROUP; // elements per task
#endif
#if SRC0B
#if MULTI
const MATS = 1u; // a workgroup computes one product (m0: task_loop)
#else
const MATS = 2u;
#endif
#else
const MATS = 1u;
#endif

// The rows and row stride (elements) of matrix m.
fn mrows(m: u32) -> u32 {
#if MULTI
  return p.Ms[m];
#else
  return p.M;
#endif
}
fn mstride(m: u32) -> u32 {
#if MULTI
  return p.As[m];
#else
  return p.A.y;
#endif
}

#include mul_mat_vec_sum
#include mul_mat_vec_rows

#include mul_mat_vec_swar
#if ROPE_KV
#include rope_math
#include rope_kv_store
#endif

#if BYTES
// Q8_0's quant word q as the signed bytes 0 and 2 in the lanes of an i32: b0 + b2 * 65536,
// its value as an integer (the lower lane's sign borrowed from the upper one).
fn byte_lanes(q: u32) -> i32 { return i32((q & 0x00ff00ffu) ^ 0x00800080u) - 0x00800080; }

// The dot product of Q8_0's quant words q0 (elements e..e+3) and q1 (e+4..e+7) with their
// activation words x (X(e, e+2), X(e+1, e+3), X(e+4, e+6), X(e+5, e+7)): each SWAR product
// holds its two-element dot product (|.| <= 2 * 128 * 127 < 2^15) in the upper half over
// the lower half's product (|.| < 2^14), which 0x8000 makes positive, so that the shift
// drops it whole: one product at a time, as two of them could overflow the upper half.
fn byte_dot(q0: u32, q1: u32, x: vec4<i32>) -> i32 {
  return ((byte_lanes(q0) * x.x + 0x8000) >> 16u) + ((byte_lanes(q0 >> 8u) * x.y + 0x8000) >> 16u) +
         ((byte_lanes(q1) * x.z + 0x8000) >> 16u) + ((byte_lanes(q1 >> 8u) * x.w + 0x8000) >> 16u);
}
#endif

#if NIBBLES

#if FP4
// The eight E2M1 codes of MXFP4's quant word q (sign, two exponent bits, one mantissa
// bit) as twice their values (ggml's kvalues_mxfp4: codes 0..7 are 0, 1, 2, 3, 4, 6, 8,
// 12, and 8..15 their negatives): the magnitudes of the positive values in the nibbles of
// .x, of the negative ones in .y. Code c of bits b2 b1 b0 is c + b2 b0 + 2 b2 b1 + 2 b2 b1
// b0 doubled, at most 12: no nibble carries into the next. Their products with an
// activation vector, .x's less .y's, add at most 2 * 12 * 127 to a lane.
fn fp4_nibbles(q: u32) -> vec2<u32> {
  let b0 = q & 0x11111111u;
  let b1 = (q >> 1u) & 0x11111111u;
  let b2 = (q >> 2u) & 0x11111111u;
  let u = b2 & b1;
  let m = (q & 0x77777777u) + (b2 & b0) + ((u + (u & b0)) << 1u);
  let s = (q >> 3u) & 0x11111111u;
  let n = m & ((s << 4u) - s); // 15 in the nibbles of the negative codes
  return vec2<u32>(m ^ n, n);
}
#endif

#if HBIT
// The lane words of Q5_K's quant word q, each topped with its fifth bit from word h from
// bit sh (the low nibbles'; the high nibbles' the next bit): weights 0..31, so that 4
// products accumulate exactly (2 * 31 * 127 each).
fn lanes5(q: u32, h: u32, sh: u32) -> vec4<i32> {
  let hl = h >> sh;
  let hh = hl >> 1u;
  let t = vec4<u32>(hl, hl >> 8u, hh, hh >> 8u) & vec4<u32>(0x00010001u);
  return vec4<i32>(nibble_lanes(q) | (t << vec4<u32>(4u)));
}

// The lane words of Q5_0's and Q5_1's quant word g of a block (elements 4 g .. 4 g + 3 in
// its low nibbles, 4 g + 16 .. in its high ones) q, topped with their fifth bits from the
// block's word h (bit e for element e): lanes 0 and 1 of a lane word hold bytes 0 and 2 (or
// 1 and 3), so bits 4 g and 4 g + 2 (4 g + 1 and 4 g + 3) go to bits 4 and 20.
fn lanes5w(q: u32, h: u32, g: u32) -> vec4<i32> {
  let tl = h >> (4u * g);
  let th = tl >> 16u;
  let t = vec4<u32>(tl, tl >> 1u, th, th >> 1u);
  return vec4<i32>(nibble_lanes(q) | ((t & vec4<u32>(1u)) << vec4<u32>(4u)) | ((t & vec4<u32>(4u)) << vec4<u32>(18u)));
}

// The topped lane words of matrix m's quant word w of group gg (of the block at byte b of
// the unit at word uw), q if given (PRELOAD), else read.
fn hbit_lanes(m: u32, uw: u32, b: u32, gg: u32, w: u32, q: u32) -> vec4<i32> {
#if HWORD
  return lanes5w(q, qhw(m, uw, b, w), gg * WPG + w);
#else
  return lanes5(q, qhw(m, uw, b, w), 2u * gg);
#endif
}

// Matrix m's word of fifth bits for quant word w of a group.
fn qhw(m: u32, uw: u32, b: u32, w: u32) -> u32 {
#if SRC0B
  if (m == 1u) { return src0b_qhwu(uw, b, w); }
#endif
#if SRC0C
  if (m == 2u) { return src0c_qhwu(uw, b, w); }
#endif
  return src0_qhwu(uw, b, w);
}
#endif

#if LEVELS
// The levels (kvalues_iq4nl: iq4_int) of IQ4_NL's and IQ4_XS's nibbles sh and sh + 16 of
// quant word q as the integer l0 + l1 * 65536, the lanes of one SWAR product.
fn level_lanes(q: u32, sh: u32) -> i32 {
  return iq4_int((q >> sh) & 15u) + (iq4_int((q >> (sh + 16u)) & 15u) << 16u);
}

// The dot products of quant word q's levels with its activation words x, the low
// nibbles' in .x, the high nibbles' in .y: levels reach 127, so each SWAR product's
// two-element dot (|.| <= 2 * 127 * 127 < 2^15) is taken alone, as in byte_dot.
fn level_dot(q: u32, x: vec4<i32>) -> vec2<i32> {
  return vec2<i32>(((level_lanes(q, 0u) * x.x + 0x8000) >> 16u) + ((level_lanes(q, 8u) * x.y + 0x8000) >> 16u),
                   ((level_lanes(q, 4u) * x.z + 0x8000) >> 16u) + ((level_lanes(q, 12u) * x.w + 0x8000) >> 16u));
}
#endif

// The SWAR products of quant word q with its activation words x: the low nibbles' two
// products in .x, the high nibbles' in .y.
fn word_dot(q: u32, x: vec4<i32>) -> vec2<i32> {
#if FP4
  let v = fp4_nibbles(q);
  return nibble_dot(v.x, x) - nibble_dot(v.y, x);
#else
  return nibble_dot(q, x);
#endif
}

// Matrix m's (0: src0, 1: src0b) unit word, quant word and affine map.
fn unit_word(m: u32, i: u32) -> u32 {
#if SRC0B
  if (m == 1u) { return src0b_unit_word(i); }
#endif
#if SRC0C
  if (m == 2u) { return src0c_unit_word(i); }
#endif
  return src0_unit_word(i);
}
fn qsw(m: u32, uw: u32, b: u32, g: u32) -> u32 {
#if SRC0B
  if (m == 1u) { return src0b_qswu(uw, b, g); }
#endif
#if SRC0C
  if (m == 2u) { return src0c_qswu(uw, b, g); }
#endif
  return src0_qswu(uw, b, g);
}
fn affine(m: u32, uw: u32, b: u32, j: u32) -> vec2<f32> {
#if SRC0B
  if (m == 1u) { return src0b_affineu(uw, b, j); }
#endif
#if SRC0C
  if (m == 2u) { return src0c_affineu(uw, b, j); }
#endif
  return src0_affineu(uw, b, j);
}
#endif

#if TAIL
// The gate form that quantizes the down product's column (ops/gate_tail.go): the groups
// of its result, in the same layout as its own column, are stored through xo; the
// counters (one a group of its rows) tell the workgroup that stores a group's last rows.
#include mul_mat_vec_q4_quant
fn xq_seti(i: u32, v: i32) { xo_seti(i, v); }
#include mul_mat_vec_xq_store
var<workgroup> tail_count: u32;
#endif

#if XQ
// Activation group gi of the column whose first group is slot col of xq (a batch's column
// c at slot (bt NCOLS + c) K / GROUP): its WPG words in x, and (dl, sl, dh, sh) (see
// mul_mat_vec_q4_act.wgsl).
fn column_group(x: ptr<function, array<vec4<i32>, {{WPG}}>>, col: u32, gi: u32) -> vec4<f32> {
  let o = 4u * (col + gi) * (WPG + 1u);
  for (var w = 0u; w < WPG; w = w + 1u) { (*x)[w] = xq_get4i(o + 4u * w); }
  return bitcast<vec4<f32>>(xq_get4i(o + 4u * WPG));
}
#else
#include mul_mat_vec_q4_quant

// The quantized activations of the group whose first element is src1 element c: the
// words of its WPG quant words in x, and (dl, sl, dh, sh).
fn quant_group(x: ptr<function, array<vec4<i32>, {{WPG}}>>, c: u32) -> vec4<f32> {
  var lo: array<vec4<f32>, {{WPG}}>;
  var hi: array<vec4<f32>, {{WPG}}>;
  var ml = vec4<f32>(0.0);
  var mh = vec4<f32>(0.0);
#if BYTES
  for (var w = 0u; w < WPG; w = w + 1u) { // word_elem(w) = 8 w, HALF = 4
    let a = src1_get8(c + 8u * w);
    lo[w] = a[0];
    hi[w] = a[1];
    ml = max(ml, abs(a[0]));
    mh = max(mh, abs(a[1]));
  }
#else
  for (var w = 0u; w < WPG; w = w + 2u) { // word_elem(w) = 4 w
    let a = src1_get8(c + 4u * w);
    let b = src1_get8(c + HALF + 4u * w);
    lo[w] = a[0];
    lo[w + 1u] = a[1];
    hi[w] = b[0];
    hi[w + 1u] = b[1];
    ml = max(ml, max(abs(a[0]), abs(a[1])));
    mh = max(mh, max(abs(b[0]), abs(b[1])));
  }
#endif
  var al = max(max(ml.x, ml.y), max(ml.z, ml.w));
  var ah = max(max(mh.x, mh.y), max(mh.z, mh.w));
#if SPLIT
  // two blocks of 32: the low and the high half's elements
#else
  al = max(al, ah); // one block of 32
  ah = al;
#endif
  let il = select(0.0, 127.0 / al, al > 0.0);
  let ih = select(0.0, 127.0 / ah, ah > 0.0);
  var sl = vec4<i32>(0);
  var sh = vec4<i32>(0);
  for (var w = 0u; w < WPG; w = w + 1u) {
    let l = round8(lo[w], il);
    let h = round8(hi[w], ih);
    sl = sl + l;
    sh = sh + h;
    (*x)[w] = quant_word(l, h);
  }
  let dl = al / 127.0;
  let dh = ah / 127.0;
  return vec4<f32>(dl, dl * if32(sl.x + sl.y + sl.z + sl.w), dh, dh * if32(sh.x + sh.y + sh.z + sh.w));
}

// Activation group gi of the column that starts at src1 element col, quantized here.
fn column_group(x: ptr<function, array<vec4<i32>, {{WPG}}>>, col: u32, gi: u32) -> vec4<f32> {
  return quant_group(x, col + group_start(gi));
}
#endif

#if NIBBLES
// The value of a group's integer dots d (the low nibbles' in .x, the high ones' in .y)
// under the affine maps of its sub-blocks, fl (the low nibbles') and with SPLIT fh (the
// high ones'), with its activations' (dl, sl, dh, sh) xd (column_group).
fn group_value(fl: vec2<f32>, fh: vec2<f32>, xd: vec4<f32>, d: vec2<i32>) -> f32 {
#if SPLIT
  return fl.x * (xd.x * if32(d.x)) + fl.y * xd.y + fh.x * (xd.z * if32(d.y)) + fh.y * xd.w;
#else
  return fl.x * (xd.x * if32(d.x + d.y)) + fl.y * (xd.y + xd.w);
#endif
}

// Adds group gg of block blk (a literal) of the unit starting at element u of the ROWS
// rows from i0 (matrix base a) of every matrix from m0 (MATS of them), times activation
// group gx of column col (column_group), to the partial sums.
fn group_rows(acc: ptr<function, array<f32, {{ACC}}>>, a: u32, i0: u32, u: u32, blk: u32, gg: u32, gx: u32, col: u32, m0: u32) {
#if PRELOAD
  // Every row's quant words first (one matrix of four words a group: see swarPreload in
  // ops/mul_mat_vec_q4.go), in flight while the activations are quantized.
  var qw: array<u32, {{QW}}>; // ROWS * WPG
  for (var r = 0u; r < ROWS; r = r + 1u) {
    let uw = unit_word(m0, a + min(i0 + r, mrows(m0) - 1u) * mstride(m0) + u);
    for (var w = 0u; w < WPG; w = w + 1u) { qw[r * WPG + w] = qsw(0u, uw, blk * src0_BLOCK_BYTES, gg * WPG + w); }
  }
#endif
  let b = blk * src0_BLOCK_BYTES;
  let j = gg * GROUP / 32u; // the sub-block of the low nibbles
#for C {{NCOLS}}
  {
    var x: array<vec4<i32>, {{WPG}}>;
    let xd = column_group(&x, col + {{C}}u * (p.K / GROUP), gx);
    for (var m = m0; m < m0 + MATS; m = m + 1u) {
      for (var r = 0u; r < ROWS; r = r + 1u) {
        let uw = unit_word(m, a + min(i0 + r, mrows(m) - 1u) * mstride(m) + u);
        var d = vec2<i32>(0);
#if BYTES
        for (var w = 0u; w < WPG; w = w + 1u) {
          d.x = d.x + byte_dot(qsw(m, uw, b, 2u * w), qsw(m, uw, b, 2u * w + 1u), x[w]);
        }
#else
#if HBIT
        for (var w0 = 0u; w0 < WPG; w0 = w0 + 2u) { // 4 products per accumulator at most
          var s = vec2<i32>(0);
          for (var w = w0; w < w0 + 2u; w = w + 1u) {
#if PRELOAD
            let q = qw[r * WPG + w];
#else
            let q = qsw(m, uw, b, gg * WPG + w);
#endif
            s = s + lanes_dot(hbit_lanes(m, uw, b, gg, w, q), x[w]);
          }
          d = d + vec2<i32>(swar_dot(s.x), swar_dot(s.y));
        }
#else
#if LEVELS
        for (var w = 0u; w < WPG; w = w + 1u) {
#if PRELOAD
          d = d + level_dot(qw[r * WPG + w], x[w]);
#else
          d = d + level_dot(qsw(m, uw, b, gg * WPG + w), x[w]);
#endif
        }
#else
        for (var w0 = 0u; w0 < WPG; w0 = w0 + 4u) { // 8 products per accumulator at most
          var s = vec2<i32>(0);
          for (var w = w0; w < w0 + 4u; w = w + 1u) {
#if PRELOAD
            s = s + word_dot(qw[r * WPG + w], x[w]);
#else
            s = s + word_dot(qsw(m, uw, b, gg * WPG + w), x[w]);
#endif
          }
          d = d + vec2<i32>(swar_dot(s.x), swar_dot(s.y));
        }
#endif
#endif
#endif
        let o = ((m - m0) * ROWS + r) * NCOLS + {{C}}u; // the sum of row r, column C
        let fl = affine(m, uw, b, j);
#if SPLIT
        let fh = affine(m, uw, b, j + 1u);
#else
        let fh = fl;
#endif
        (*acc)[o] = (*acc)[o] + group_value(fl, fh, xd, d);
      }
    }
  }
#endfor
}

#endif

#if LANES
// group_rows for the single products of the formats with fifth bits (HBIT) with the
// columns quantized ahead (XQ): each row's words are topped with their fifth bits once
// (hbit_lanes), then multiplied by every column's group in turn (group_rows does it for
// every column), two words a SWAR accumulator.
fn group_lanes(acc: ptr<function, array<f32, {{ACC}}>>, a: u32, i0: u32, u: u32, blk: u32, gg: u32, gx: u32, col: u32, m0: u32) {
  let b = blk * src0_BLOCK_BYTES;
  let j = gg * GROUP / 32u; // the sub-block of the low nibbles
  for (var m = m0; m < m0 + MATS; m = m + 1u) {
    for (var r = 0u; r < ROWS; r = r + 1u) {
      let uw = unit_word(m, a + min(i0 + r, mrows(m) - 1u) * mstride(m) + u);
      var lw: array<vec4<i32>, {{WPG}}>;
      for (var w = 0u; w < WPG; w = w + 1u) { lw[w] = hbit_lanes(m, uw, b, gg, w, qsw(m, uw, b, gg * WPG + w)); }
      let fl = affine(m, uw, b, j);
#if SPLIT
      let fh = affine(m, uw, b, j + 1u);
#else
      let fh = fl;
#endif
#for C {{NCOLS}}
      {
        var x: array<vec4<i32>, {{WPG}}>;
        let xd = column_group(&x, col + {{C}}u * (p.K / GROUP), gx);
        var d = vec2<i32>(0);
        for (var w0 = 0u; w0 < WPG; w0 = w0 + 2u) { // 4 products per accumulator at most
          var s = vec2<i32>(0);
          for (var w = w0; w < w0 + 2u; w = w + 1u) { s = s + lanes_dot(lw[w], x[w]); }
          d = d + vec2<i32>(swar_dot(s.x), swar_dot(s.y));
        }
        let o = ((m - m0) * ROWS + r) * NCOLS + {{C}}u; // the sum of row r, column C
        (*acc)[o] = (*acc)[o] + group_value(fl, fh, xd, d);
      }
#endfor
    }
  }
}
#endif

#if Q6K
// Matrix m's Q6_K pieces (wgsl/q6k.go) of the block at byte b.
fn q6ql(m: u32, b: u32, g: u32) -> u32 {
#if SRC0B
  if (m == 1u) { return src0b_q6ql(b, g); }
#endif
  return src0_q6ql(b, g);
}
fn q6qh(m: u32, b: u32, g: u32) -> u32 {
#if SRC0B
  if (m == 1u) { return src0b_q6qh(b, g); }
#endif
  return src0_q6qh(b, g);
}
fn q6scales(m: u32, b: u32, j: u32) -> u32 {
#if SRC0B
  if (m == 1u) { return src0b_q6scales(b, j); }
#endif
  return src0_q6scales(b, j);
}
fn q6d(m: u32, b: u32) -> f32 {
#if SRC0B
  if (m == 1u) { return src0b_q6d(b); }
#endif
  return src0_q6d(b);
}
fn q6block(m: u32, i: u32) -> u32 {
#if SRC0B
  if (m == 1u) { return src0b_q6block(i); }
#endif
  return src0_q6block(i);
}

// The lane words of ql word q and qh word h (its runs' bits from sh, low nibbles' run;
// from sh + 4, high nibbles' run) in signed lanes, the words whose SWAR products with
// activation words x q6_word_dot takes: .x and .y the low nibbles' (bytes 0 and 2, 1 and
// 3), .z and .w the high nibbles'.
fn q6_lanes(q: u32, h: u32, sh: u32) -> vec4<i32> {
  let hl = h >> sh;
  let hh = h >> (sh + 4u);
  let l = vec4<u32>(q, q >> 8u, q >> 4u, q >> 12u) & vec4<u32>(0x000f000fu);
  let t = (vec4<u32>(hl, hl >> 8u, hh, hh >> 8u) & vec4<u32>(0x00030003u)) << vec4<u32>(4u);
  return vec4<i32>(l | t) - vec4<i32>(0x00200020);
}

// The SWAR products of ql word q and qh word h (its runs' bits from sh, low nibbles' run;
// from sh + 4, high nibbles' run) in signed lanes with the activation words x: the low
// nibbles' two products in .x, the high nibbles' in .y.
fn q6_word_dot(q: u32, h: u32, sh: u32, x: vec4<i32>) -> vec2<i32> {
  return lanes_dot(q6_lanes(q, h, sh), x);
}

#if COLS
// q6_group_rows by NCOLS columns (XQ): each row's weights are put in lanes once
// (q6_lanes: ROWS x WPG lane words a matrix held), then multiplied by every column's
// group in turn.
fn q6_group_cols(acc: ptr<function, array<f32, {{ACC}}>>, a: u32, i0: u32, u: u32, gg: u32, gx: u32, col: u32) {
  let h = gg >> 1u;
  let sh = 2u * (gg & 1u);
  var lw: array<vec4<i32>, {{LW}}>; // MATS x ROWS x WPG
  var sf: array<vec4<f32>, {{SF}}>; // MATS x ROWS: d times the four sub-blocks' scales
  for (var m = 0u; m < MATS; m = m + 1u) {
    for (var r = 0u; r < ROWS; r = r + 1u) {
      let b = q6block(m, a + min(i0 + r, p.M - 1u) * p.A.y + u);
      let mr = m * ROWS + r;
      for (var w = 0u; w < WPG; w = w + 1u) {
        lw[mr * WPG + w] = q6_lanes(q6ql(m, b, 16u * h + 4u * sh + w), q6qh(m, b, 8u * h + w), sh);
      }
      let sl = i8x4(q6scales(m, b, 8u * h + sh)); // .x, .y: the low run's
      let sc = i8x4(q6scales(m, b, 8u * h + sh + 4u)); // the high run's
      sf[mr] = q6d(m, b) * vec4<f32>(sl.xy, sc.xy);
    }
  }
#for C {{NCOLS}}
  {
    var x: array<vec4<i32>, {{WPG}}>;
    let xd = column_group(&x, col + {{C}}u * (p.K / GROUP), gx);
    for (var mr = 0u; mr < MATS * ROWS; mr = mr + 1u) {
      var d: array<vec2<i32>, 2>; // per 16 elements (l < 16, l >= 16): low run, high run
      for (var k = 0u; k < 2u; k = k + 1u) {
        d[k] = vec2<i32>(0);
        for (var w0 = 4u * k; w0 < 4u * k + 4u; w0 = w0 + 2u) { // 4 products per accumulator at most
          var s = vec2<i32>(0);
          for (var w = w0; w < w0 + 2u; w = w + 1u) { s = s + lanes_dot(lw[mr * WPG + w], x[w]); }
          d[k] = d[k] + vec2<i32>(swar_dot(s.x), swar_dot(s.y));
        }
      }
      let f = sf[mr];
      let o = mr * NCOLS + {{C}}u; // the sum of row r of matrix m, column C
      (*acc)[o] = (*acc)[o] + xd.x * (f.x * if32(d[0].x) + f.y * if32(d[1].x)) + xd.z * (f.z * if32(d[0].y) + f.w * if32(d[1].y));
    }
  }
#endfor
}
#endif

// Adds group gg (2 h + p) of the block holding element u (its first) of the ROWS rows from
// i0 (matrix base a) of every matrix, times activation group gx of column col, to the
// partial sums.
fn q6_group_rows(acc: ptr<function, array<f32, {{ACC}}>>, a: u32, i0: u32, u: u32, gg: u32, gx: u32, col: u32) {
  var x: array<vec4<i32>, {{WPG}}>;
  let xd = column_group(&x, col, gx);
  let h = gg >> 1u;
  let sh = 2u * (gg & 1u);
  for (var m = 0u; m < MATS; m = m + 1u) {
    for (var r = 0u; r < ROWS; r = r + 1u) {
      let b = q6block(m, a + min(i0 + r, p.M - 1u) * p.A.y + u);
      var d: array<vec2<i32>, 2>; // per 16 elements (l < 16, l >= 16): low run, high run
      for (var k = 0u; k < 2u; k = k + 1u) {
        d[k] = vec2<i32>(0);
        for (var w0 = 4u * k; w0 < 4u * k + 4u; w0 = w0 + 2u) { // 4 products per accumulator at most
          var s = vec2<i32>(0);
          for (var w = w0; w < w0 + 2u; w = w + 1u) {
            s = s + q6_word_dot(q6ql(m, b, 16u * h + 4u * sh + w), q6qh(m, b, 8u * h + w), sh, x[w]);
          }
          d[k] = d[k] + vec2<i32>(swar_dot(s.x), swar_dot(s.y));
        }
      }
      let sl = i8x4(q6scales(m, b, 8u * h + sh)); // .x, .y: the low run's
      let sc = i8x4(q6scales(m, b, 8u * h + sh + 4u)); // the high run's
      let f = q6d(m, b);
      (*acc)[m * ROWS + r] = (*acc)[m * ROWS + r] + f * (xd.x * (sl.x * if32(d[0].x) + sl.y * if32(d[1].x)) +
                                                         xd.z * (sc.x * if32(d[0].y) + sc.y * if32(d[1].y)));
    }
  }
}
#endif

// The partial sums of the tasks of invocation lid: the ROWS rows from i0 (matrix base a)
// of the matrices from m0, by the column at col (xq's slot, or src1's element).
fn task_loop(acc: ptr<function, array<f32, {{ACC}}>>, a: u32, i0: u32, col: u32, lid: u32, m0: u32) {
  for (var t = lid; t < p.K / TASK; t = t + {{WG}}u) {
    let c = t * TASK;
#if Q6K
    let u = c - c % 256u;
    let gg = (c % 256u) / GROUP;
#if COLS
    q6_group_cols(acc, a, i0, u, gg, t, col);
#else
    q6_group_rows(acc, a, i0, u, gg, t, col);
#endif
#else
    let u = c - c % src0_UNIT_ELEMS;
    let gg = (c % src0_BLOCK_ELEMS) / GROUP;
#for B {{SRC0_UNIT_BLOCKS}}
#if LANES
    group_lanes(acc, a, i0, u, {{B}}u, gg, c / GROUP + {{B}}u, col, m0);
#else
    group_rows(acc, a, i0, u, {{B}}u, gg, c / GROUP + {{B}}u, col, m0);
#endif
#endfor
#endif
  }
}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  formats_init(lid);
#if MULTI
  let g = group_id(wid, nwg);
  if (g >= p.Start[{{PRODUCTS}}]) { return; } // the whole workgroup: uniform
  var prod = 0u; // the workgroup's product
#for P {{PRODUCTS}}
  if (g >= p.Start[{{P}}]) { prod = {{P}}u; }
#endfor
  let i0 = (g - p.Start[prod]) * ROWS;
  let m = mrows(prod);
  let b2 = 0u;
  let b3 = 0u;
  var acc: array<f32, {{ACC}}>;
  for (var r = 0u; r < {{ACC}}u; r = r + 1u) { acc[r] = 0.0; }
#for P {{PRODUCTS}}
  if (prod == {{P}}u) { task_loop(&acc, 0u, i0, 0u, lid, {{P}}u); }
#endfor
#else
#include mul_mat_vec_begin
  let bt = w.y;
  let m = p.M;
#if IDS
  let ev = mv_expert(b2, b3);
  let a = ev.x;
  let col = ev.y;
#else
  let a = (b2 / p.R2) * p.A.z + (b3 / p.R3) * p.A.w;
#if XQ
  let col = bt * NCOLS * (p.K / GROUP); // the batch's first group in xq
#else
  let col = b2 * p.B.z + b3 * p.B.w;
#endif
#endif
  var acc: array<f32, {{ACC}}>;
  for (var r = 0u; r < {{ACC}}u; r = r + 1u) { acc[r] = 0.0; }
  task_loop(&acc, a, i0, col, lid, 0u);
#endif
  sum_partials(lid, &acc);
#if ROPE_KV
  if (lid == 0u && i0 < m) { rope_kv_store(prod, i0, vec2<f32>(red[0], red[{{WG}}u])); } // rows i0, i0 + 1
#else
  // sum o = r NCOLS + c is row i0 + r, column c
  if (lid < ROWS * NCOLS && i0 + lid / NCOLS < m) {
    var y = red[lid * {{WG}}u];
#if GLU
    y = silu(y) * red[(ROWS * NCOLS + lid) * {{WG}}u];
#endif
    let o = vec4<u32>(i0 + lid / NCOLS, lid % NCOLS, b2, b3);
#if MULTI
    if (prod == 0u) { dst_set(offset4(o, p.D), y); }
    if (prod == 1u) { dstb_set(offset4(o, p.Db), y); }
#if SRC0C
    if (prod == 2u) { dstc_set(offset4(o, p.Dc), y); }
#endif
#else
    dst_set(offset4(o, p.D), y);
#endif
  }
#if TAIL
  // Count the rows stored on their group's counter (the stores visible to the device
  // first); the workgroup that completes the group reads its GROUP results back and
  // quantizes them as the down product's column group i0 / GROUP, then sets the counter
  // back to zero for the next dispatch.
  storageBarrier();
  if (lid == 0u) { tail_count = atomicAdd(&counters[i0 / GROUP], ROWS) + ROWS; }
  if (workgroupUniformLoad(&tail_count) == GROUP) {
    storageBarrier();
    let q = i0 / GROUP;
    let w = lid % WPG;
    let e = group_start(q) + word_elem(w);
    var lo: vec4<f32>;
    var hi: vec4<f32>;
    for (var j = 0u; j < 4u; j = j + 1u) {
      lo[j] = dst_get(offset4(vec4<u32>(e + j, 0u, 0u, 0u), p.D));
      hi[j] = dst_get(offset4(vec4<u32>(e + HALF + j, 0u, 0u, 0u), p.D));
    }
    xq_store(lid, w, q, lo, hi, lid < WPG);
    if (lid == 0u) { atomicStore(&counters[q], 0u); }
  }
#endif
#endif
}
