// mul_mat_big: loads this invocation's chunk of the K slice starting at kf (zero at and
// past kend) into the registers w: elements kf .. kf + 7 of src0's tile row lr (is_a) or
// src1's; with RAW_A, src0's chunk as its raw F16 words into wr instead.
    w = mat2x4<f32>();
    if (is_a) {
#if RAW_A
      wr = vec4<u32>();
      if (kf < kend) { wr = src0[(p.src0_off + a_row + kf) >> 3u]; }
#else
#if VEC_A
      if (kf < kend) { w = src0_get8(a_row + kf); }
#else
      for (var e = 0u; e < 8u; e = e + 1u) {
        if (kf + e < kend) { w[e / 4u][e % 4u] = src0_get(a_row + (kf + e) * p.A.x); }
      }
#endif
#endif
    } else if (lr < TN) {
#if VEC_B
      if (kf < kend) { w = src1_get8(b_row + kf); }
#else
      for (var e = 0u; e < 8u; e = e + 1u) {
        if (kf + e < kend) { w[e / 4u][e % 4u] = src1_get(b_row + (kf + e) * p.B.x); }
      }
#endif
    }
