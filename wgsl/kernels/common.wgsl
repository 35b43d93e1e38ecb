// Shared helpers, prepended to every kernel.

// Linear invocation index over a grid that may be split across x and y (x at most 65535).
fn linear_id(wid: vec3<u32>, nwg: vec3<u32>, lid: u32, wg: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * wg + lid;
}

// Linear workgroup index over a grid split across x, y and z.
fn group_id(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return wid.x + nwg.x * (wid.y + nwg.y * wid.z);
}

// Splits a linear element index into coordinates over the shape ne (ne.w unused: dim 3 is
// unbounded).
fn coords(i: u32, ne: vec4<u32>) -> vec4<u32> {
  let i0 = i % ne.x;
  let r0 = i / ne.x;
  let i1 = r0 % ne.y;
  let r1 = r0 / ne.y;
  return vec4<u32>(i0, i1, r1 % ne.z, r1 / ne.z);
}

// Coordinates (0, i1, i2, i3) of the first element of row `row` (rows in order over dims
// 1, 2, 3 of the shape ne).
fn row_coords(row: u32, ne: vec4<u32>) -> vec4<u32> {
  let i1 = row % ne.y;
  let r = row / ne.y;
  return vec4<u32>(0u, i1, r % ne.z, r / ne.z);
}

// The element offset of coordinates c under strides s (in elements): c.x*s.x + ... + c.w*s.w.
fn offset4(c: vec4<u32>, s: vec4<u32>) -> u32 {
  return c.x * s.x + c.y * s.y + c.z * s.z + c.w * s.w;
}

// Small unsigned integers (v < 2^23) minus an integer offset o, exactly, as f32: v is
// the mantissa of 2^23, subtracted with o in one addition. The quantized formats convert
// every element with these, not with f32(u32): on NVIDIA GPUs an integer-to-float
// conversion issues at an eighth of the FMA rate (Hopper: 16 against 128 per clock and
// SM), enough to make dequantization, not memory, bound a mat-vec.
fn uf(v: u32, o: f32) -> f32 { return bitcast<f32>(v | 0x4b000000u) - (8388608.0 + o); }
fn uf4(v: vec4<u32>, o: f32) -> vec4<f32> { return bitcast<vec4<f32>>(v | vec4<u32>(0x4b000000u)) - (8388608.0 + o); }
// A small signed integer (|v| < 2^22) as f32, through the mantissa of 1.5 * 2^23.
fn if32(v: i32) -> f32 { return bitcast<f32>(v + 0x4b400000) - 12582912.0; }
// Halves (IEEE binary16, two per word, the low one first) as f32, exactly (subnormals,
// Inf and NaN included), through unpack2x16float. It replaced a conversion by integer
// arithmetic (~16 operations a value) that bound the F16 kernels by their arithmetic: on
// an H100 a 14336 x 4096 mat-vec with weights beyond the L2 cache 51.9 -> 44.7 µs, a 1B
// F16 decode's GPU time per graph 3,560 -> 2,594-2,661 µs (docs/ARCHITECTURE.md).
fn half4(w: vec2<u32>) -> vec4<f32> { return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y)); }
fn half2(w: u32) -> vec2<f32> { return unpack2x16float(w); }
// Eight halves (a 16-byte load of F16 data) as the two columns of a mat2x4.
fn half8(w: vec4<u32>) -> mat2x4<f32> { return mat2x4<f32>(half4(w.xy), half4(w.zw)); }
// Four small values (below 1024) in the 16-bit lanes of lo (the first and third) and hi
// (the second and fourth) as f32, plus 1024, exactly: a lane ORed with 0x6400 (1024 as a
// half) reads as 1024 + value through unpack2x16float, two values a conversion and half
// the integer operations of extracting every byte on its own. On an H200 (weights beyond
// the L2 cache, 14336 x 4096, one column, µs, per-byte extraction -> this): Q6_K mat-vec
// 46.0, 45.8 -> 44.1, 44.0; Q8_0 37.5, 37.6 -> 36.5, 36.0. For the nibbles (u4x4) it
// helped Q4_0 (32.1 -> 30.6) but not Q4_K (42.7 -> 44.5, 55.2), so u4x4 stays as it is.
fn lanes1024(lo: u32, hi: u32) -> vec4<f32> {
  let a = unpack2x16float(lo | 0x64006400u);
  let b = unpack2x16float(hi | 0x64006400u);
  return vec4<f32>(a.x, b.x, a.y, b.y);
}
// The four bytes of w, plus 1024.
fn bytes1024(w: u32) -> vec4<f32> { return lanes1024(w & 0x00ff00ffu, (w >> 8u) & 0x00ff00ffu); }
// Quants with a high bit apart, plus 1024, through bytes1024: the low bits (mask m) at bit
// sh of each byte of w, each topped (at bit hs) with bit j of the same byte of hw: Q5_0
// and Q5_1 (their bits spread to bytes first: spread4), Q5_K and Q3_K. Each value took a
// select for its bit and the mantissa trick for its low bits before: on an H100 (14336 x
// 4096, weights beyond the L2 cache, one column, µs, two runs each, one start) Q5_0
// 38.0, 38.1 -> 33.5, 33.4, Q5_K 51.0, 51.2 -> 43.0, 43.3, Q3_K 50.4, 50.3 -> 43.0, 43.5
// (ggml-vulkan in another start 25.3, 24.3, 31.0).
fn hbits1024(w: u32, sh: u32, m: u32, hw: u32, j: u32, hs: u32) -> vec4<f32> {
  return bytes1024(((w >> sh) & m) | (((hw >> j) & 0x01010101u) << hs));
}
// Bits 0..3 of h as bit 0 of bytes 0..3 (four shifted copies that do not overlap).
fn spread4(h: u32) -> u32 { return ((h & 15u) * 0x00204081u) & 0x01010101u; }
// Unpacking of quantized blocks (see quantFormats in formats.go): the four bytes of w as
// signed values; the four nibbles at bit sh of each byte of w; bits 0..3 of h.
fn i8x4(w: u32) -> vec4<f32> { return bytes1024(w ^ 0x80808080u) - 1152.0; }
fn u4x4(w: u32, sh: u32) -> vec4<f32> { return uf4(ux4(w, sh, 15u), 0.0); }
// Single bits become 0.0 or 1.0 by a select, never through uf4: the NVIDIA compiler (driver
// 580) folds float constants across uf4's subtraction, so that 2 uf4(b) - 1 came out as
// 2 (2^23 + b) - (2^24 + 1), whose constant f32 cannot hold (0 or 2 for -1 or 1), and
// u + 16 uf4(b) lost u; 490 of 2,993 conformance cases (Q5_0, Q5_1, Q5_K, Q3_K, Q1_0 and
// the IQ2/IQ3 signs) failed on an H200 and passed on lavapipe. (Those formats now put a
// high bit into the byte of its low bits, hbits1024, and the signs into the floats' sign
// bits; Q1_0 selects.)
fn bits4(h: u32) -> vec4<f32> { return select(vec4<f32>(0.0), vec4<f32>(1.0), (vec4<u32>(h) & vec4<u32>(1u, 2u, 4u, 8u)) != vec4<u32>(0u)); }
// The bits at bit sh of each byte of w under mask (sh + width <= 8).
fn ux4(w: u32, sh: u32, mask: u32) -> vec4<u32> {
  return (vec4<u32>(w) >> vec4<u32>(sh, sh + 8u, sh + 16u, sh + 24u)) & vec4<u32>(mask);
}
// The 6-bit scale and min of sub-block j (0..7) of a Q4_K or Q5_K block, from its 12
// scale bytes as the words w0, w1, w2: for j < 4 the low six bits of bytes j and j + 4;
// otherwise the nibbles of byte j + 4 topped with the two high bits of bytes j - 4 and j.
fn k4_scale_min(j: u32, w0: u32, w1: u32, w2: u32) -> vec2<f32> {
  let k = 8u * (j & 3u);
  let a = (w0 >> k) & 0xffu;
  let c = (w1 >> k) & 0xffu;
  let e = (w2 >> k) & 0xffu;
  let lo = vec2<u32>(a & 63u, c & 63u);
  let hi = vec2<u32>((e & 15u) | ((a >> 6u) << 4u), (e >> 4u) | ((c >> 6u) << 4u));
  let v = select(hi, lo, j < 4u);
  return vec2<f32>(uf(v.x, 0.0), uf(v.y, 0.0));
}
// The 6-bit scale k (0..15) of a Q3_K block, from its 12 scale bytes: the low (k < 8)
// or high nibble of byte k % 8 (w, the word of bytes 0..3 or 4..7 that holds it) topped
// with bits 2 (k / 4), 2 (k / 4) + 1 of byte k % 4 of bytes 8..11 (w2).
fn k3_scale(k: u32, w: u32, w2: u32) -> u32 {
  let c = 8u * (k & 3u);
  return ((w >> (c + 4u * (k >> 3u))) & 15u) | (((w2 >> (c + 2u * (k >> 2u))) & 3u) << 4u);
}

fn silu(x: f32) -> f32 { return x / (1.0 + exp(-x)); }

// Rounds to the nearest f16 value and back.
fn round_f16(x: f32) -> f32 { return unpack2x16float(pack2x16float(vec2<f32>(x, 0.0))).x; }

// ggml's CPU GELU: the tanh approximation evaluated on the f16-rounded input, rounded to f16.
fn gelu(x: f32) -> f32 {
  if (x <= -10.0) { return 0.0; }
  if (x >= 10.0) { return x; }
  let h = round_f16(x);
  let t = tanh(0.7978845608028654 * h * (1.0 + 0.044715 * h * h));
  return round_f16(0.5 * h * (1.0 + t));
}

// ggml's CPU GELU_QUICK: x * sigmoid(1.702 x) evaluated on the f16-rounded input, rounded
// to f16 (its table), for every input.
fn gelu_quick(x: f32) -> f32 {
  let h = round_f16(x);
  return round_f16(h / (1.0 + exp(-1.702 * h)));
}

// The error function, |error| < 1.5e-7 (Abramowitz and Stegun 7.1.26).
fn erf(x: f32) -> f32 {
  let a = abs(x);
  let t = 1.0 / (1.0 + 0.3275911 * a);
  let q = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign(x) * (1.0 - q * exp(-a * a));
}

// GELU with the exact error function (ggml's GELU_ERF).
fn gelu_erf(x: f32) -> f32 { return 0.5 * x * (1.0 + erf(x * 0.7071067811865476)); }

// exp(x) - 1 without the cancellation near 0 (C's expm1f).
fn expm1(x: f32) -> f32 {
  if (abs(x) < 1e-2) { return x * (1.0 + x * (0.5 + x * (0.16666667 + x * 0.041666668))); }
  return exp(x) - 1.0;
}

// Workgroup reductions over one value per invocation ({{WG}} invocations). They use the
// shared array wg_red and end with a barrier, so they can be called back to back.
var<workgroup> wg_red: array<f32, {{WG}}>;

fn wg_sum(lid: u32, v: f32) -> f32 {
  wg_red[lid] = v;
  workgroupBarrier();
  for (var s = {{WG}}u / 2u; s > 0u; s = s / 2u) {
    if (lid < s) { wg_red[lid] = wg_red[lid] + wg_red[lid + s]; }
    workgroupBarrier();
  }
  let r = wg_red[0];
  workgroupBarrier();
  return r;
}

fn wg_max(lid: u32, v: f32) -> f32 {
  wg_red[lid] = v;
  workgroupBarrier();
  for (var s = {{WG}}u / 2u; s > 0u; s = s / 2u) {
    if (lid < s) { wg_red[lid] = max(wg_red[lid], wg_red[lid + s]); }
    workgroupBarrier();
  }
  let r = wg_red[0];
  workgroupBarrier();
  return r;
}

// MXFP4 and NVFP4 (formats.go): the E2M1 nibbles at bit sh of each byte of w (ggml's
// kvalues_fp4 halved: 0, 0.5, 1, 1.5, 2, 3, 4, 6, bit 3 the sign) times 2^-14, exactly: a
// nibble's sign, exponent and mantissa bits placed as a half's bits 15, 11..10 and 9 make
// that value (exponent 0 a subnormal: 0 or 2^-15), two halves a conversion through
// unpack2x16float. The formats fold 2^14 into their scales. Where each value took a
// dozen integer operations (a shift by the exponent, a select for the subnormals, the
// mantissa trick, the sign), MXFP4's mat-vec on an H100 (14336 x 4096, weights beyond the
// L2 cache, one column) went from 50.6 to 34.4 µs (ggml-vulkan 21.2 in another start).
fn fp4h4(w: u32, sh: u32) -> vec4<f32> {
  let t = w >> sh;
  let lo = t & 0x000f000fu; // bytes 0 and 2
  let hi = (t >> 8u) & 0x000f000fu; // bytes 1 and 3
  let a = unpack2x16float(((lo & 0x00080008u) << 12u) | ((lo & 0x00070007u) << 9u));
  let c = unpack2x16float(((hi & 0x00080008u) << 12u) | ((hi & 0x00070007u) << 9u));
  return vec4<f32>(a.x, c.x, a.y, c.y);
}
// An NVFP4 scale: the UE4M3 byte x (4 exponent bits biased by 7 over 3 mantissa bits, bit
// 7 ignored; 0 and 0x7f read as zero), halved as ggml_ue4m3_to_fp32.
fn ue4m3(x: u32) -> f32 {
  let e = (x >> 3u) & 15u;
  let m = f32(x & 7u);
  let v = select(ldexp(1.0 + m / 8.0, i32(e) - 7), ldexp(m, -9), e == 0u);
  return select(0.5 * v, 0.0, x == 0u || x == 0x7fu);
}
// TQ1_0 (formats.go): base-3 digit n (0..4) of each byte of w, a byte holding its digits
// as the fraction byte / 256 (digit n is the integer part of 3 times the byte multiplied
// by 3^n modulo 256).
fn tq1x4(w: u32, n: u32) -> vec4<f32> {
  let p3 = select((0x1b090301u >> (8u * n)) & 0xffu, 81u, n == 4u);
  let q = (ux4(w, 0u, 255u) * vec4<u32>(p3)) & vec4<u32>(255u);
  return uf4((q * vec4<u32>(3u)) >> vec4<u32>(8u), 0.0);
}
