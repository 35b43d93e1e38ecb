// Matrix-vector product of Q6_K weights by NCOLS (2 to 8) src1 columns, the Q6_K mat-vec
// (mul_mat_vec_q6k.wgsl, which says how sixteen invocations share a block and how a
// workgroup takes blocks, one or, with PAIRS, two at a time) with each block's weights
// turned into floats once for every column. With HOLD (1 to NCOLS) the block's weights of
// the ROWS rows are turned into floats first (W16) and the columns' activations then read
// HOLD columns at a time; without (0), every column's activations are read for each block
// first (Acts) and each row's weights turned into floats in turn:
// dst[i, j, b2, b3] = sum_k src0[k, i, b2 / R2, b3 / R3] * src1[k, j, b2, b3]
// With GLU it stores silu(src0 . src1) * (src0b . src1) for every column.
const ROWS = {{ROWS}}u;
const NCOLS = {{NCOLS}}u;
const OUTS = ROWS * NCOLS; // sums of one matrix
const G = {{WG}}u / 16u; // blocks of a row at a time
const UN = 2u; // G blocks UN times a loop turn
const HOLD = {{HOLD}}u; // columns whose activations are held at a time (0: all, Acts)
#include mul_mat_vec_sum
#include mul_mat_vec_rows

// Four consecutive src1 elements from element i (a multiple of 4).
fn x4(i: u32) -> vec4<f32> {
  return src1[(p.src1_off + i) >> 2u];
}

#if HOLD
// A block's 16 weights of one invocation turned into floats plus 1024 (w[r]: run r), the
// runs' scales sc and the block's d, as mul_mat_vec_q6k.wgsl's q6k16 turns them.
struct W16 {
  w: array<vec4<f32>, 4>,
  sc: vec4<f32>,
  d: f32,
}

// The W16 of invocation t from the block's fields: ql words qa (runs 0 and 2) and qb (runs
// 1 and 3), the qh word qh, the scale words sa and sb, and d.
fn dec16(qa: u32, qb: u32, qh: u32, sa: u32, sb: u32, d: f32, t: u32) -> W16 {
  let lo = 0x0f0f0f0fu;
  let hi = 0x30303030u;
  var o: W16;
  o.w[0] = bytes1024((qa & lo) | ((qh << 4u) & hi));
  o.w[1] = bytes1024((qb & lo) | ((qh << 2u) & hi));
  o.w[2] = bytes1024(((qa >> 4u) & lo) | (qh & hi));
  o.w[3] = bytes1024(((qb >> 4u) & lo) | ((qh >> 2u) & hi));
  let e = 8u * ((t & 7u) >> 2u);
  o.sc = vec4<f32>(i8x4(sa >> e).xz, i8x4(sb >> e).xz);
  o.d = d;
  return o;
}

// The W16 of invocation t of the src0 block at word uw, byte b (0 or 2, a literal).
fn block16(uw: u32, b: u32, t: u32) -> W16 {
  let h = t >> 3u;
  let v = t & 7u;
  return dec16(src0_q6qlu(uw, b, 16u * h + v), src0_q6qlu(uw, b, 16u * h + 8u + v), src0_q6qhu(uw, b, 8u * h + v),
               src0_q6scalesu(uw, b, 8u * h), src0_q6scalesu(uw, b, 8u * h + 4u), src0_q6du(uw, b), t);
}

#if GLU
// block16 of src0b, the up projection's weights.
fn block16b(uw: u32, b: u32, t: u32) -> W16 {
  let h = t >> 3u;
  let v = t & 7u;
  return dec16(src0b_q6qlu(uw, b, 16u * h + v), src0b_q6qlu(uw, b, 16u * h + 8u + v), src0b_q6qhu(uw, b, 8u * h + v),
               src0b_q6scalesu(uw, b, 8u * h), src0b_q6scalesu(uw, b, 8u * h + 4u), src0b_q6du(uw, b), t);
}
#endif

// The product of a block's W16 with one column's activations x0..x3 (runs 0..3) whose
// sums per run are xs: a weight q - 32 contributes (q + 1024) x, less 1056 x in the run's
// sum.
fn dot16(w: W16, x0: vec4<f32>, x1: vec4<f32>, x2: vec4<f32>, x3: vec4<f32>, xs: vec4<f32>) -> f32 {
  let u = vec4<f32>(dot(w.w[0], x0), dot(w.w[1], x1), dot(w.w[2], x2), dot(w.w[3], x3));
  return w.d * dot(w.sc, u - 1056.0 * xs);
}

// Adds the products of the blocks' weights wa (and, with GLU, wb) of the ROWS rows with
// every column's activations from element e of the first column to acc: HOLD columns'
// activations at a time, each block's weights turned into floats once for all of them.
fn cols16(wa: ptr<function, array<W16, {{ROWS}}>>, wb: ptr<function, array<W16, {{ROWSB}}>>, e: u32, acc: ptr<function, array<f32, {{ACC}}>>) {
  for (var g = 0u; g < NCOLS; g = g + HOLD) {
    var x: array<vec4<f32>, {{HOLD4}}>;
    var xs: array<vec4<f32>, {{HOLD}}>;
    for (var c = 0u; c < HOLD; c = c + 1u) {
      if (g + c < NCOLS) {
        for (var r = 0u; r < 4u; r = r + 1u) { x[4u * c + r] = x4(e + (g + c) * p.B.y + 32u * r); }
      }
      xs[c] = vec4<f32>(dot(x[4u * c], vec4<f32>(1.0)), dot(x[4u * c + 1u], vec4<f32>(1.0)),
                        dot(x[4u * c + 2u], vec4<f32>(1.0)), dot(x[4u * c + 3u], vec4<f32>(1.0)));
    }
    for (var r = 0u; r < ROWS; r = r + 1u) {
      for (var c = 0u; c < HOLD; c = c + 1u) {
        if (g + c < NCOLS) {
          let o = r * NCOLS + g + c;
          (*acc)[o] = (*acc)[o] + dot16((*wa)[r], x[4u * c], x[4u * c + 1u], x[4u * c + 2u], x[4u * c + 3u], xs[c]);
#if GLU
          (*acc)[OUTS + o] = (*acc)[OUTS + o] + dot16((*wb)[r], x[4u * c], x[4u * c + 1u], x[4u * c + 2u], x[4u * c + 3u], xs[c]);
#endif
        }
      }
    }
  }
}

#else
// The activations of invocation t's 16 elements of a block, for every column: x[4 c + r]
// holds run r of column c (elements from e + c B.y), xs[c] their sums per run.
struct Acts {
  x: array<vec4<f32>, {{NCOLS4}}>,
  xs: array<vec4<f32>, {{NCOLS}}>,
}

// The activations from element e of the first column.
fn acts(e: u32) -> Acts {
  var a: Acts;
  for (var c = 0u; c < NCOLS; c = c + 1u) {
    for (var r = 0u; r < 4u; r = r + 1u) { a.x[4u * c + r] = x4(e + c * p.B.y + 32u * r); }
    a.xs[c] = vec4<f32>(dot(a.x[4u * c], vec4<f32>(1.0)), dot(a.x[4u * c + 1u], vec4<f32>(1.0)),
                        dot(a.x[4u * c + 2u], vec4<f32>(1.0)), dot(a.x[4u * c + 3u], vec4<f32>(1.0)));
  }
  return a;
}

// Adds the products of invocation t's 16 elements of a block with the activations a of
// every column to acc[o + c], from the block's fields as mul_mat_vec_q6k.wgsl's q6k16
// takes them.
fn acts16(qa: u32, qb: u32, qh: u32, sa: u32, sb: u32, d: f32, t: u32, a: ptr<function, Acts>, acc: ptr<function, array<f32, {{ACC}}>>, o: u32) {
  let lo = 0x0f0f0f0fu;
  let hi = 0x30303030u;
  let w0 = bytes1024((qa & lo) | ((qh << 4u) & hi));
  let w1 = bytes1024((qb & lo) | ((qh << 2u) & hi));
  let w2 = bytes1024(((qa >> 4u) & lo) | (qh & hi));
  let w3 = bytes1024(((qb >> 4u) & lo) | ((qh >> 2u) & hi));
  let e = 8u * ((t & 7u) >> 2u);
  let sc = vec4<f32>(i8x4(sa >> e).xz, i8x4(sb >> e).xz);
  for (var c = 0u; c < NCOLS; c = c + 1u) {
    let u = vec4<f32>(dot(w0, (*a).x[4u * c]), dot(w1, (*a).x[4u * c + 1u]), dot(w2, (*a).x[4u * c + 2u]), dot(w3, (*a).x[4u * c + 3u]));
    (*acc)[o + c] = (*acc)[o + c] + d * dot(sc, u - 1056.0 * (*a).xs[c]);
  }
}

// Adds the products of invocation t's 16 elements of the src0 block at word uw, byte b
// (0 or 2, a literal) to acc[o + c].
fn ablock16(uw: u32, b: u32, t: u32, a: ptr<function, Acts>, acc: ptr<function, array<f32, {{ACC}}>>, o: u32) {
  let h = t >> 3u;
  let v = t & 7u;
  acts16(src0_q6qlu(uw, b, 16u * h + v), src0_q6qlu(uw, b, 16u * h + 8u + v), src0_q6qhu(uw, b, 8u * h + v),
         src0_q6scalesu(uw, b, 8u * h), src0_q6scalesu(uw, b, 8u * h + 4u), src0_q6du(uw, b), t, a, acc, o);
}

#if GLU
// ablock16 of src0b, the up projection's weights.
fn ablock16b(uw: u32, b: u32, t: u32, a: ptr<function, Acts>, acc: ptr<function, array<f32, {{ACC}}>>, o: u32) {
  let h = t >> 3u;
  let v = t & 7u;
  acts16(src0b_q6qlu(uw, b, 16u * h + v), src0b_q6qlu(uw, b, 16u * h + 8u + v), src0b_q6qhu(uw, b, 8u * h + v),
         src0b_q6scalesu(uw, b, 8u * h), src0b_q6scalesu(uw, b, 8u * h + 4u), src0b_q6du(uw, b), t, a, acc, o);
}
#endif

#endif
@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
#include mul_mat_vec_q6k_begin
#if HOLD
#if PAIRS
  for (var q = j; q < nb / 2u; q = q + G) {
    let k = 2u * q;
    let e = col + 256u * k + 128u * (t >> 3u) + 4u * (t & 7u);
#for H 2
    {
      var wa: array<W16, {{ROWS}}>;
      var wb: array<W16, {{ROWSB}}>;
      for (var r = 0u; r < ROWS; r = r + 1u) {
        let row = a + min(i0 + r, p.M - 1u) * p.A.y; // the row's first element
        // block 2q's word; 2q + 1 is 52 words on, byte 2
        wa[r] = block16(((src0_q6block(row) + 210u * k) >> 2u) + 52u * {{H}}u, 2u * {{H}}u, t);
#if GLU
        wb[r] = block16b(((src0b_q6block(row) + 210u * k) >> 2u) + 52u * {{H}}u, 2u * {{H}}u, t);
#endif
      }
      cols16(&wa, &wb, e + 256u * {{H}}u, &acc);
    }
#endfor
  }
#else
  let off = (j & 1u) * (G / 2u) + (j >> 1u); // the block this sixteen takes of G
  for (var k0 = 0u; k0 < nb; k0 = k0 + UN * G) {
#for U 2
    {
      let k = k0 + {{U}}u * G + off;
      if (k < nb) {
        var wa: array<W16, {{ROWS}}>;
        var wb: array<W16, {{ROWSB}}>;
        for (var r = 0u; r < ROWS; r = r + 1u) {
          let row = a + min(i0 + r, p.M - 1u) * p.A.y; // the row's first element
          let blk = src0_q6block(row) + 210u * k; // its byte
          if ((blk & 2u) == 0u) {
            wa[r] = block16(blk >> 2u, 0u, t);
          } else {
            wa[r] = block16(blk >> 2u, 2u, t);
          }
#if GLU
          let blkb = src0b_q6block(row) + 210u * k; // same strides
          if ((blkb & 2u) == 0u) {
            wb[r] = block16b(blkb >> 2u, 0u, t);
          } else {
            wb[r] = block16b(blkb >> 2u, 2u, t);
          }
#endif
        }
        cols16(&wa, &wb, col + 256u * k + 128u * (t >> 3u) + 4u * (t & 7u), &acc);
      }
    }
#endfor
  }
#endif
#else
#if PAIRS
  for (var q = j; q < nb / 2u; q = q + G) {
    let k = 2u * q;
    let e = col + 256u * k + 128u * (t >> 3u) + 4u * (t & 7u);
    var x = acts(e);
    var y = acts(e + 256u);
    for (var r = 0u; r < ROWS; r = r + 1u) {
      let row = a + min(i0 + r, p.M - 1u) * p.A.y; // the row's first element
      let uw = (src0_q6block(row) + 210u * k) >> 2u; // block 2q's word; 2q + 1 is 52 words on, byte 2
      ablock16(uw, 0u, t, &x, &acc, r * NCOLS);
      ablock16(uw + 52u, 2u, t, &y, &acc, r * NCOLS);
#if GLU
      let ub = (src0b_q6block(row) + 210u * k) >> 2u;
      ablock16b(ub, 0u, t, &x, &acc, OUTS + r * NCOLS);
      ablock16b(ub + 52u, 2u, t, &y, &acc, OUTS + r * NCOLS);
#endif
    }
  }
#else
  let off = (j & 1u) * (G / 2u) + (j >> 1u); // the block this sixteen takes of G
  for (var k0 = 0u; k0 < nb; k0 = k0 + UN * G) {
#for U 2
    {
      let k = k0 + {{U}}u * G + off;
      if (k < nb) {
        var x = acts(col + 256u * k + 128u * (t >> 3u) + 4u * (t & 7u));
        for (var r = 0u; r < ROWS; r = r + 1u) {
          let row = a + min(i0 + r, p.M - 1u) * p.A.y; // the row's first element
          let blk = src0_q6block(row) + 210u * k; // its byte
          if ((blk & 2u) == 0u) {
            ablock16(blk >> 2u, 0u, t, &x, &acc, r * NCOLS);
          } else {
            ablock16(blk >> 2u, 2u, t, &x, &acc, r * NCOLS);
          }
#if GLU
          let blkb = src0b_q6block(row) + 210u * k; // same strides
          if ((blkb & 2u) == 0u) {
            ablock16b(blkb >> 2u, 0u, t, &x, &acc, OUTS + r * NCOLS);
          } else {
            ablock16b(blkb >> 2u, 2u, t, &x, &acc, OUTS + r * NCOLS);
          }
#endif
        }
      }
    }
#endfor
  }
#endif
#endif
  sum_partials(lid, &acc);
  if (lid < OUTS && i0 + lid / NCOLS < p.M) {
#if GLU
    let y = silu(red[lid * {{WG}}u]) * red[(OUTS + lid) * {{WG}}u];
#else
    let y = red[lid * {{WG}}u];
#endif
    dst_set(offset4(vec4<u32>(i0 + lid / NCOLS, lid % NCOLS, b2, b3), p.D), y);
  }
}
