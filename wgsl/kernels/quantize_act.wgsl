// Quantizes the src1 columns of a MUL_MAT of 4-bit weights (the nibble formats:
// wgsl/nibbles.go) to 8 bits per block of 32, for the integer mat-vec (mul_mat_vec_q4.wgsl),
// which reads them from xq and xs. One invocation per group of GROUP = 2 HALF elements of
// one column (column j of batch bt: the column index c = bt * N + j).
// dx = max|x| / 127 over the block, xq = x / dx rounded half away from zero (C's roundf).
// xq holds K / 2 words per column, packed in the weights' nibble order: for quant word g
// (elements e..e+3 in its low nibbles, e+HALF.. in its high ones) the vector of words
// 4g..4g+3 is (X(e, e+2), X(e+1, e+3), X(e+HALF, e+HALF+2), X(e+HALF+1, e+HALF+3)) with
// X(a, b) = xq[b] + xq[a] * 65536. xs holds K / 16 floats per column: per block (dx, sx),
// sx = dx * sum xq (the sum of the dequantized activations, which the weights' offsets
// multiply).
const HALF = {{HALF}}u;
const WPG = HALF / 4u; // quant words per group
const GROUP = 2u * HALF; // elements per group

fn amax8(m: mat2x4<f32>) -> f32 {
  let a = max(abs(m[0]), abs(m[1]));
  return max(max(a.x, a.y), max(a.z, a.w));
}

// x * id rounded half away from zero, as integers.
fn q8x4(x: vec4<f32>, id: f32) -> vec4<i32> {
  let y = x * id;
  let t = trunc(y);
  return vec4<i32>(select(round(y), t + sign(y), abs(y - t) == vec4<f32>(0.5)));
}

fn hsum(v: vec4<i32>) -> i32 { return v.x + v.y + v.z + v.w; }

// Stores the activation words of quant word w: lo holds elements e..e+3, hi e+HALF..e+HALF+3.
fn store_x(w: u32, lo: vec4<i32>, hi: vec4<i32>) {
  xq_seti(4u * w, lo.z + lo.x * 65536);
  xq_seti(4u * w + 1u, lo.w + lo.y * 65536);
  xq_seti(4u * w + 2u, hi.z + hi.x * 65536);
  xq_seti(4u * w + 3u, hi.w + hi.y * 65536);
}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nwg, lid, {{WG}}u);
  let groups = p.K / GROUP;
  if (i >= groups * p.N * p.Batches) { return; }
  let g = i % groups;
  let c = i / groups;
  let j = c % p.N;
  let bt = c / p.N;
  let v = j * p.B.y + (bt % p.Ne2) * p.B.z + (bt / p.Ne2) * p.B.w + g * GROUP;
  var ml = 0.0;
  var mh = 0.0;
  for (var k = 0u; k < HALF; k = k + 8u) {
    ml = max(ml, amax8(src1_get8(v + k)));
    mh = max(mh, amax8(src1_get8(v + HALF + k)));
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
  let w = c * (p.K / 8u) + g * WPG;
  for (var k = 0u; k < HALF; k = k + 8u) {
    let lo = src1_get8(v + k);
    let hi = src1_get8(v + HALF + k);
    let l0 = q8x4(lo[0], il);
    let l1 = q8x4(lo[1], il);
    let h0 = q8x4(hi[0], ih);
    let h1 = q8x4(hi[1], ih);
    sl = sl + l0 + l1;
    sh = sh + h0 + h1;
    store_x(w + k / 4u, l0, h0);
    store_x(w + k / 4u + 1u, l1, h1);
  }
  let dl = ml / 127.0;
  let dh = mh / 127.0;
  let s = 2u * (c * (p.K / 32u) + g * (GROUP / 32u));
#if SPLIT
  xs_set(s, dl);
  xs_set(s + 1u, dl * f32(hsum(sl)));
  xs_set(s + 2u, dh);
  xs_set(s + 3u, dh * f32(hsum(sh)));
#else
  xs_set(s, dl);
  xs_set(s + 1u, dl * f32(hsum(sl) + hsum(sh)));
#endif
}
