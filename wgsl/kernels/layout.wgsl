// Ops that place source elements at other coordinates of dst, one invocation per dst
// element (c its coordinates):
//   CONCAT  dst[c] = src0[c] inside src0's shape (p.Ae), else src1[c - p.Off] (p.Off: src0's
//           extent along the concatenated dimension, zero in the others);
//   REPEAT  dst[c] = src0[c % p.Ae];
//   PAD     dst[c] = src0[c - p.Off] (p.Off: the left padding), zero outside src0's shape
//           p.Ae, or wrapped around it when p.Circular;
//   ACC     dst[e] = src0[e] + src1[v] where contiguous element e lies in the view of dst with
//           strides p.Off.xyz and offset p.Off.w (elements) at coordinates v < p.Ae;
//   ARANGE  dst[i] = p.Start + p.Step * i.
// INT: I32 elements, copied as integers.

#if INT
fn load0(i: u32) -> i32 { return src0_geti(i); }
fn store(i: u32, v: i32) { dst_seti(i, v); }
const zero = 0;
#else
#if ARANGE
#else
fn load0(i: u32) -> f32 { return src0_get(i); }
#endif
fn store(i: u32, v: f32) { dst_set(i, v); }
const zero = 0.0;
#endif

fn element(i: u32) {
  let c = coords(i, p.Ne);
  let d = offset4(c, p.D);
#if CONCAT
  if (all(c < p.Ae)) {
    store(d, load0(offset4(c, p.A)));
  } else {
#if INT
    store(d, src1_geti(offset4(c - p.Off, p.B)));
#else
    store(d, src1_get(offset4(c - p.Off, p.B)));
#endif
  }
#endif
#if REPEAT
  store(d, load0(offset4(c % p.Ae, p.A)));
#endif
#if PAD
  let ne = vec4<i32>(p.Ae);
  var s = vec4<i32>(c) - vec4<i32>(p.Off);
  if (p.Circular != 0u) {
    // wrapped in unsigned arithmetic (no remainder of a negative value): c - off mod ne
    s = vec4<i32>((c + p.Ae - p.Off % p.Ae) % p.Ae);
  }
  if (all(s >= vec4<i32>(0)) && all(s < ne)) {
    store(d, load0(offset4(vec4<u32>(s), p.A)));
  } else {
    store(d, zero);
  }
#endif
#if ACC
  var v = load0(offset4(c, p.A));
  let e = i; // dst and src0 are contiguous
  if (e >= p.Off.w) {
    let r3 = e - p.Off.w;
    let r2 = r3 % p.Off.z;
    let r1 = r2 % p.Off.y;
    let w = vec4<u32>(r1 % p.Off.x, r1 / p.Off.x, r2 / p.Off.y, r3 / p.Off.z);
    if (all(w < p.Ae)) { v = v + src1_get(offset4(w, p.B)); }
  }
  store(d, v);
#endif
#if ARANGE
  store(d, p.Start + p.Step * f32(i));
#endif
}

#include elementwise
