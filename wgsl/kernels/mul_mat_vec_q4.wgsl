// Matrix-vector product of 4-bit weights (the nibble formats: wgsl/nibbles.go) by one
// src1 column, with integer dot products two weights at a time in the 16-bit lanes of
// an i32 (SWAR).
// dst[i, 0, b2, b3] = sum_k src0[k, i, b2 / R2, b3 / R3] * src1[k, 0, b2, b3]
// A workgroup first quantizes its src1 column to 8 bits per block of 32 (dx = max|x| /
// 127, xq = x / dx rounded half away from zero) into workgroup memory, packed in the
// weights' nibble order: for quant word g (elements e..e+3 in its low nibbles, e+HALF..
// in its high ones) the vector xw[g] = (X(e, e+2), X(e+1, e+3), X(e+HALF, e+HALF+2),
// X(e+HALF+1, e+HALF+3)) with X(a, c) = xq[c] + xq[a] * 65536. Per block it keeps
// (dx, sx), sx = dx * sum xq: the sum of the quantized activations, so that the result
// is exactly the product of the dequantized weights by the quantized activations (its
// error is sum w (x' - x), small for weights centred on zero, where the unquantized sum
// would leave the larger sum q d (x' - x)).
// Then it computes ROWS consecutive rows: invocations take tasks (a unit of Q4_0's two
// blocks, one group otherwise) interleaved along the row, each for all ROWS rows.
// Weight word w masked by 0x000F000F (after shifts of 0, 8, 4, 12) holds two weights
// q0 + q1 * 65536; its product with X(a, c) is q0 xq[c] + (q0 xq[a] + q1 xq[c]) 65536 +
// q1 xq[a] 2^32: in wrapping i32 arithmetic the upper half holds the two-element dot
// product over a borrow from the lower half. Up to 8 such products accumulate exactly
// (swar_dot); then the group's integer dot turns into a float once, under the
// sub-block's affine map (scale, offset): scale * dx * dot + offset * sx.
const ROWS = {{ROWS}}u;
const HALF = {{HALF}}u;
const WPG = HALF / 4u; // quant words per group
const GROUP = 2u * HALF; // elements per group
const GPB = src0_BLOCK_ELEMS / GROUP; // groups per block
const TASK = {{SRC0_UNIT_BLOCKS}}u * GROUP; // elements per task

var<workgroup> xw: array<vec4<i32>, {{XWORDS}}>; // K / 8
var<workgroup> xs: array<vec2<f32>, {{XBLOCKS}}>; // K / 32: (dx, sx)
var<workgroup> red: array<f32, {{RED}}>; // ROWS * WG

fn amax8(m: mat2x4<f32>) -> f32 {
  let a = max(abs(m[0]), abs(m[1]));
  return max(max(a.x, a.y), max(a.z, a.w));
}

// x * id rounded half away from zero (C's roundf), as integers.
fn q8x4(x: vec4<f32>, id: f32) -> vec4<i32> {
  let y = x * id;
  let t = trunc(y);
  return vec4<i32>(select(round(y), t + sign(y), abs(y - t) == vec4<f32>(0.5)));
}

// The activation words of one quant word: lo holds elements e..e+3, hi e+HALF..e+HALF+3.
fn pack_x(lo: vec4<i32>, hi: vec4<i32>) -> vec4<i32> {
  return vec4<i32>(lo.z + lo.x * 65536, lo.w + lo.y * 65536, hi.z + hi.x * 65536, hi.w + hi.y * 65536);
}

fn hsum(v: vec4<i32>) -> i32 { return v.x + v.y + v.z + v.w; }

// Quantizes group g of the src1 column at element v into xw and xs.
fn quant_group(v: u32, g: u32) {
  let c = v + g * GROUP;
  var ml = 0.0;
  var mh = 0.0;
  for (var k = 0u; k < HALF; k = k + 8u) {
    ml = max(ml, amax8(src1_get8(c + k)));
    mh = max(mh, amax8(src1_get8(c + HALF + k)));
  }
#if SPLIT
  // two blocks of 32: the low and the high nibbles' elements
#else
  ml = max(ml, mh); // one block of 32
  mh = ml;
#endif
  let il = select(0.0, 127.0 / ml, ml > 0.0);
  let ih = select(0.0, 127.0 / mh, mh > 0.0);
  var sl = vec4<i32>(0);
  var sh = vec4<i32>(0);
  for (var k = 0u; k < HALF; k = k + 8u) {
    let lo = src1_get8(c + k);
    let hi = src1_get8(c + HALF + k);
    let l0 = q8x4(lo[0], il);
    let l1 = q8x4(lo[1], il);
    let h0 = q8x4(hi[0], ih);
    let h1 = q8x4(hi[1], ih);
    sl = sl + l0 + l1;
    sh = sh + h0 + h1;
    xw[g * WPG + k / 4u] = pack_x(l0, h0);
    xw[g * WPG + k / 4u + 1u] = pack_x(l1, h1);
  }
  let dl = ml / 127.0;
  let dh = mh / 127.0;
#if SPLIT
  xs[2u * g] = vec2<f32>(dl, dl * f32(hsum(sl)));
  xs[2u * g + 1u] = vec2<f32>(dh, dh * f32(hsum(sh)));
#else
  xs[g] = vec2<f32>(dl, dl * f32(hsum(sl) + hsum(sh)));
#endif
}

// The two-element dot products of up to 8 wrapped SWAR products summed in acc: the upper
// half of acc less the borrow of the sign-extended lower half.
fn swar_dot(acc: i32) -> i32 {
  let lo = (acc << 16u) >> 16u;
  return (acc - lo) >> 16u;
}

// A small integer (|v| < 2^22) as f32, through the mantissa of 1.5 * 2^23 (no conversion
// instruction: see uf in common.wgsl).
fn if32(v: i32) -> f32 { return bitcast<f32>(v + 0x4b400000) - 12582912.0; }

// Adds group gg of block blk (a literal) of the unit starting at element u of the ROWS
// rows from i0 (src0 base a), times the activation group gx, to the partial sums.
fn group_rows(acc: ptr<function, array<f32, {{ROWS}}>>, a: u32, i0: u32, u: u32, blk: u32, gg: u32, gx: u32) {
  var x: array<vec4<i32>, {{WPG}}>;
  for (var w = 0u; w < WPG; w = w + 1u) { x[w] = xw[gx * WPG + w]; }
#if SPLIT
  let xl = xs[2u * gx];
  let xh = xs[2u * gx + 1u];
#else
  let x0 = xs[gx];
#endif
  let b = blk * src0_BLOCK_BYTES;
  let j = gg * GROUP / 32u; // the sub-block of the low nibbles
  for (var r = 0u; r < ROWS; r = r + 1u) {
    let uw = src0_unit_word(a + min(i0 + r, p.M - 1u) * p.A.y + u);
    var dl = 0;
    var dh = 0;
    for (var w0 = 0u; w0 < WPG; w0 = w0 + 4u) { // 8 products per accumulator at most
      var al = 0;
      var ah = 0;
      for (var w = w0; w < w0 + 4u; w = w + 1u) {
        let q = src0_qswu(uw, b, gg * WPG + w);
        al = al + i32(q & 0x000f000fu) * x[w].x + i32((q >> 8u) & 0x000f000fu) * x[w].y;
        ah = ah + i32((q >> 4u) & 0x000f000fu) * x[w].z + i32((q >> 12u) & 0x000f000fu) * x[w].w;
      }
      dl = dl + swar_dot(al);
      dh = dh + swar_dot(ah);
    }
#if SPLIT
    let fl = src0_affineu(uw, b, j);
    let fh = src0_affineu(uw, b, j + 1u);
    (*acc)[r] = (*acc)[r] + fl.x * (xl.x * if32(dl)) + fl.y * xl.y + fh.x * (xh.x * if32(dh)) + fh.y * xh.y;
#else
    let f = src0_affineu(uw, b, j);
    (*acc)[r] = (*acc)[r] + f.x * (x0.x * if32(dl + dh)) + f.y * x0.y;
#endif
  }
}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  formats_init(lid);
  let g = group_id(wid, nwg);
  let blocks = (p.M + ROWS - 1u) / ROWS;
  if (g >= blocks * p.Batches) { return; } // the whole workgroup: uniform
  let i0 = (g % blocks) * ROWS;
  let bt = g / blocks;
  let b2 = bt % p.Ne2;
  let b3 = bt / p.Ne2;
  let a = (b2 / p.R2) * p.A.z + (b3 / p.R3) * p.A.w;
  let v = b2 * p.B.z + b3 * p.B.w;
  for (var q = lid; q < p.K / GROUP; q = q + {{WG}}u) { quant_group(v, q); }
  workgroupBarrier();
  var acc: array<f32, {{ROWS}}>;
  for (var r = 0u; r < ROWS; r = r + 1u) { acc[r] = 0.0; }
  for (var t = lid; t < p.K / TASK; t = t + {{WG}}u) {
    let c = t * TASK;
    let u = c - c % src0_UNIT_ELEMS;
    let gg = (c % src0_BLOCK_ELEMS) / GROUP;
#for B {{SRC0_UNIT_BLOCKS}}
    group_rows(&acc, a, i0, u, {{B}}u, gg, c / GROUP + {{B}}u);
#endfor
  }
  for (var r = 0u; r < ROWS; r = r + 1u) { red[r * {{WG}}u + lid] = acc[r]; }
  workgroupBarrier();
  for (var s = {{WG}}u / 2u; s > 0u; s = s / 2u) {
    if (lid < s) {
      for (var r = 0u; r < ROWS; r = r + 1u) { red[r * {{WG}}u + lid] = red[r * {{WG}}u + lid] + red[r * {{WG}}u + lid + s]; }
    }
    workgroupBarrier();
  }
  if (lid < ROWS && i0 + lid < p.M) {
    dst_set(offset4(vec4<u32>(i0 + lid, 0u, b2, b3), p.D), red[lid * {{WG}}u]);
  }
}
