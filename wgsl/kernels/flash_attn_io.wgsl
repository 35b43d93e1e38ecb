// Flash attention helpers shared by flash_attn.wgsl and flash_attn_tile.wgsl: -Inf (the
// CPU's -INFINITY) made from its bits and the test for it; k8(i) and v8(i), elements
// i..i+7 of K and V through the format's routine (VEC_K, VEC_V), else element by element;
// and the forms of K, V and mask values loaded ahead (KW, VW, MW).
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

// KW and VW are what a load of eight K or V elements issued ahead leaves in registers:
// with RAW_K (RAW_V), an F16 K (V) read eight elements at a time, its raw words, turned
// into floats by k_dec (v_dec) where they are staged or used, so that the load does not
// wait for its data before the work it was issued ahead of; else the floats.
#if RAW_K
alias KW = vec4<u32>;
fn kw8(i: u32) -> KW { return key[(p.key_off + i) >> 3u]; }
fn k_dec(w: KW) -> mat2x4<f32> { return half8(w); }
#else
alias KW = mat2x4<f32>;
fn kw8(i: u32) -> KW { return k8(i); }
fn k_dec(w: KW) -> mat2x4<f32> { return w; }
#endif
#if RAW_V
alias VW = vec4<u32>;
fn vw8(i: u32) -> VW { return val[(p.val_off + i) >> 3u]; }
fn v_dec(w: VW) -> mat2x4<f32> { return half8(w); }
#else
alias VW = mat2x4<f32>;
fn vw8(i: u32) -> VW { return v8(i); }
fn v_dec(w: VW) -> mat2x4<f32> { return w; }
#endif
#if MASK
// MW is a mask value loaded ahead: the word holding its half (the mask is F16), turned
// into a float by m_dec(w, i) where it is used.
alias MW = u32;
fn mw(i: u32) -> MW { return mask[(p.mask_off + i) >> 1u]; }
fn m_dec(w: MW, i: u32) -> f32 { return half2(w)[(p.mask_off + i) & 1u]; }
#endif
