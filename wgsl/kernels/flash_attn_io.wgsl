// Flash attention helpers shared by flash_attn.wgsl and flash_attn_tile.wgsl: -Inf (the
// CPU's -INFINITY) made from its bits and the test for it; k8(i) and v8(i), elements
// i..i+7 of K and V through the format's routine (VEC_K, VEC_V), else element by element.
fn neg_inf() -> f32 { return bitcast<f32>(0xff800000u); }
fn is_neg_inf(x: f32) -> bool { return bitcast<u32>(x) == 0xff800000u; }

#if VEC_K
fn k8(i: u32) -> mat2x4<f32> { return key_get8(i); }
#else
fn k8(i: u32) -> mat2x4<f32> {
  return mat2x4<f32>(vec4<f32>(key_get(i), key_get(i + 1u), key_get(i + 2u), key_get(i + 3u)),
                     vec4<f32>(key_get(i + 4u), key_get(i + 5u), key_get(i + 6u), key_get(i + 7u)));
}
#endif
#if VEC_V
fn v8(i: u32) -> mat2x4<f32> { return val_get8(i); }
#else
fn v8(i: u32) -> mat2x4<f32> {
  return mat2x4<f32>(vec4<f32>(val_get(i), val_get(i + 1u), val_get(i + 2u), val_get(i + 3u)),
                     vec4<f32>(val_get(i + 4u), val_get(i + 5u), val_get(i + 6u), val_get(i + 7u)));
}
#endif
