// Matrix-vector product of Q6_K weights by one src1 column (decode):
// dst[i, 0, b2, b3] = sum_k src0[k, i, b2 / R2, b3 / R3] * src1[k, 0, b2, b3]
// Sixteen invocations take a block (256 elements), each 16 of them: with h = t / 8 and
// v = t % 8 (t the invocation's place among the sixteen), elements 128 h + 32 r + 4 v ..
// + 3 of the four runs r, whose low four bits are the nibbles of ql words 16 h + v (runs
// 0 and 2) and 16 h + 8 + v (runs 1 and 3), whose high two bits are bits 2 r, 2 r + 1 of
// each byte of qh word 8 h + v, under scales 8 h + 2 r + v / 4 (wgsl/q6k.go): five words
// of weights and two of scales read once for 16 products, where the eight-element routine
// reads its scale and d for every eight. A Q6_K block is 210 bytes, so blocks alternate
// between two alignments: a workgroup takes G = WG / 16 blocks of its rows at a time,
// blocks k0 + (j % 2) G / 2 + j / 2 for j = 0 .. G - 1, so that the two sixteens of a
// 32-wide SIMD group read blocks of one alignment (G a multiple of 4), and branches on it
// once per block: each branch reads every field at a place within its words that the
// compiler knows (one load, or two neighbouring ones shifted by 16 bits).
// With PAIRS (rows of an even count of blocks, each starting on a word), a sixteen takes
// blocks two at a time instead, the first starting on a word and the second two bytes past
// one, both places literals and no branch.
// A workgroup computes ROWS consecutive rows, its invocations' partial sums added up in
// shared memory; a loop turn takes UN blocks of a row per sixteen.
// With GLU, a second matrix src0b (the up projection; the same shape and strides as src0,
// the gate) is multiplied by the same activations and the kernel stores
// silu(src0 . src1) * (src0b . src1) (llama's gate, up and SWIGLU in one).
const ROWS = {{ROWS}}u;
const G = {{WG}}u / 16u; // blocks of a row at a time
const UN = 2u; // G blocks UN times a loop turn
#include mul_mat_vec_sum
#include mul_mat_vec_rows

// Four consecutive src1 elements from element i (a multiple of 4).
fn x4(i: u32) -> vec4<f32> {
  return src1[(p.src1_off + i) >> 2u];
}

// The products of invocation t's 16 elements of a block with their activations x (run r
// in x[r]) whose sums are xs, from the block's fields: ql words qa (runs 0 and 2) and qb
// (runs 1 and 3), the qh word qh, the scale words sa (from scale 8 h) and sb (8 h + 4),
// and d. The bits are put together four weights to a word (each run's nibbles with its two
// high bits in bits 4 and 5 of every byte) before the bytes are turned into floats plus
// 1024 (bytes1024), and a weight q - 32 contributes (q + 1024) x, less 1056 x in the run's
// sum.
fn q6k16(qa: u32, qb: u32, qh: u32, sa: u32, sb: u32, d: f32, t: u32, x: ptr<function, array<vec4<f32>, 4>>, xs: vec4<f32>) -> f32 {
  let lo = 0x0f0f0f0fu;
  let hi = 0x30303030u;
  let u = vec4<f32>(dot(bytes1024((qa & lo) | ((qh << 4u) & hi)), (*x)[0]),
                    dot(bytes1024((qb & lo) | ((qh << 2u) & hi)), (*x)[1]),
                    dot(bytes1024(((qa >> 4u) & lo) | (qh & hi)), (*x)[2]),
                    dot(bytes1024(((qb >> 4u) & lo) | ((qh >> 2u) & hi)), (*x)[3]));
  // the runs' scales 8 h + 2 r + v / 4, signed bytes: bytes 0 and 2 of the scale words
  // from 8 h and 8 h + 4, shifted by v / 4 bytes
  let e = 8u * ((t & 7u) >> 2u);
  let sc = vec4<f32>(i8x4(sa >> e).xz, i8x4(sb >> e).xz);
  return d * dot(sc, u - 1056.0 * xs);
}

// The products of invocation t's 16 elements of the src0 block at word uw, byte b (0 or
// 2, a literal): with h = t / 8 and v = t % 8, ql words 16 h + v and 16 h + 8 + v, qh word
// 8 h + v, scale words from 8 h and 8 h + 4.
fn block16(uw: u32, b: u32, t: u32, x: ptr<function, array<vec4<f32>, 4>>, xs: vec4<f32>) -> f32 {
  let h = t >> 3u;
  let v = t & 7u;
  return q6k16(src0_q6qlu(uw, b, 16u * h + v), src0_q6qlu(uw, b, 16u * h + 8u + v), src0_q6qhu(uw, b, 8u * h + v),
               src0_q6scalesu(uw, b, 8u * h), src0_q6scalesu(uw, b, 8u * h + 4u), src0_q6du(uw, b), t, x, xs);
}

#if GLU
// block16 of src0b, the up projection's weights.
fn block16b(uw: u32, b: u32, t: u32, x: ptr<function, array<vec4<f32>, 4>>, xs: vec4<f32>) -> f32 {
  let h = t >> 3u;
  let v = t & 7u;
  return q6k16(src0b_q6qlu(uw, b, 16u * h + v), src0b_q6qlu(uw, b, 16u * h + 8u + v), src0b_q6qhu(uw, b, 8u * h + v),
               src0b_q6scalesu(uw, b, 8u * h), src0b_q6scalesu(uw, b, 8u * h + 4u), src0b_q6du(uw, b), t, x, xs);
}
#endif

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
#include mul_mat_vec_q6k_begin
#if PAIRS
  // Rows of an even count of blocks, each row starting on a word: block 2q starts on a
  // word and block 2q + 1 two bytes past one, so sixteen j takes the pairs q = j, j + G,
  // .. with both places literals and no branch, a turn's loads free to go first.
  for (var q = j; q < nb / 2u; q = q + G) {
    let k = 2u * q;
    let e = col + 256u * k + 128u * (t >> 3u) + 4u * (t & 7u);
    var x: array<vec4<f32>, 4>;
    var y: array<vec4<f32>, 4>;
    for (var r = 0u; r < 4u; r = r + 1u) { x[r] = x4(e + 32u * r); y[r] = x4(e + 256u + 32u * r); }
    let xs = vec4<f32>(dot(x[0], vec4<f32>(1.0)), dot(x[1], vec4<f32>(1.0)), dot(x[2], vec4<f32>(1.0)), dot(x[3], vec4<f32>(1.0)));
    let ys = vec4<f32>(dot(y[0], vec4<f32>(1.0)), dot(y[1], vec4<f32>(1.0)), dot(y[2], vec4<f32>(1.0)), dot(y[3], vec4<f32>(1.0)));
    for (var r = 0u; r < ROWS; r = r + 1u) {
      let row = a + min(i0 + r, p.M - 1u) * p.A.y; // the row's first element
      let uw = (src0_q6block(row) + 210u * k) >> 2u; // block 2q's word; 2q + 1 is 52 words on, byte 2
      acc[r] = acc[r] + block16(uw, 0u, t, &x, xs) + block16(uw + 52u, 2u, t, &y, ys);
#if GLU
      let ub = (src0b_q6block(row) + 210u * k) >> 2u;
      acc[ROWS + r] = acc[ROWS + r] + block16b(ub, 0u, t, &x, xs) + block16b(ub + 52u, 2u, t, &y, ys);
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
        let e = col + 256u * k + 128u * (t >> 3u) + 4u * (t & 7u);
        var x: array<vec4<f32>, 4>;
        for (var r = 0u; r < 4u; r = r + 1u) { x[r] = x4(e + 32u * r); }
      let xs = vec4<f32>(dot(x[0], vec4<f32>(1.0)), dot(x[1], vec4<f32>(1.0)), dot(x[2], vec4<f32>(1.0)), dot(x[3], vec4<f32>(1.0)));
        for (var r = 0u; r < ROWS; r = r + 1u) {
          let row = a + min(i0 + r, p.M - 1u) * p.A.y; // the row's first element
          let blk = src0_q6block(row) + 210u * k; // its byte
          if ((blk & 2u) == 0u) {
            acc[r] = acc[r] + block16(blk >> 2u, 0u, t, &x, xs);
          } else {
            acc[r] = acc[r] + block16(blk >> 2u, 2u, t, &x, xs);
          }
#if GLU
          let blkb = src0b_q6block(row) + 210u * k; // same strides
          if ((blkb & 2u) == 0u) {
            acc[ROWS + r] = acc[ROWS + r] + block16b(blkb >> 2u, 0u, t, &x, xs);
          } else {
            acc[ROWS + r] = acc[ROWS + r] + block16b(blkb >> 2u, 2u, t, &x, xs);
          }
#endif
        }
      }
    }
#endfor
  }
#endif
  sum_partials(lid, &acc);
  if (lid < ROWS && i0 + lid < p.M) {
#if GLU
    let y = silu(red[lid * {{WG}}u]) * red[(ROWS + lid) * {{WG}}u];
#else
    let y = red[lid * {{WG}}u];
#endif
    dst_set(offset4(vec4<u32>(i0 + lid, 0u, b2, b3), p.D), y);
  }
}
