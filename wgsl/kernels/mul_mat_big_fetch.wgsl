// mul_mat_big2: loads this invocation's chunks of the K slice starting at kf (zero at and
// past kend) into registers: w (HALF), else wa and wb.
#if HALF
    w = mat2x4<f32>();
    if (is_a) {
#if VEC_A
      if (kf < kend) { w = src0_get8(a_row + kf); }
#else
      for (var e = 0u; e < 8u; e = e + 1u) {
        if (kf + e < kend) { w[e / 4u][e % 4u] = src0_get(a_row + (kf + e) * p.A.x); }
      }
#endif
    } else {
#if VEC_B
      if (kf < kend) { w = src1_get8(b_row + kf); }
#else
      for (var e = 0u; e < 8u; e = e + 1u) {
        if (kf + e < kend) { w[e / 4u][e % 4u] = src1_get(b_row + (kf + e) * p.B.x); }
      }
#endif
    }
#else
    for (var j = 0u; j < {{PER}}u; j = j + 1u) {
      let k = kf + lc;
      wa[j] = mat2x4<f32>();
      wb[j] = mat2x4<f32>();
#if VEC_A
      if (k < kend) { wa[j] = src0_get8(a_row[j] + k); }
#else
      for (var e = 0u; e < 8u; e = e + 1u) {
        if (k + e < kend) { wa[j][e / 4u][e % 4u] = src0_get(a_row[j] + (k + e) * p.A.x); }
      }
#endif
#if VEC_B
      if (k < kend) { wb[j] = src1_get8(b_row[j] + k); }
#else
      for (var e = 0u; e < 8u; e = e + 1u) {
        if (k + e < kend) { wb[j][e / 4u][e % 4u] = src1_get(b_row[j] + (k + e) * p.B.x); }
      }
#endif
    }
#endif
