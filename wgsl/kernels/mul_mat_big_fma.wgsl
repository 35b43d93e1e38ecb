// mul_mat_big: adds the products of the slice buffer at vec4 offset off to acc: 8 rows
// by 8 columns an invocation (WIDE, TN 128), 8 by 4 (NARROW, TN 64) or, with SLIM (TN 32,
// only mul_mat_id_big), 4 by 4: rows 4 tx .. 4 tx + 3 of tx < 32, columns 4 ty .. of ty < 8.
    for (var kk = 0u; kk < TK; kk = kk + 1u) {
      let a0 = ta[off + kk * 32u + tx];
#if WIDE
      let a1 = ta[off + kk * 32u + 16u + tx];
      let c0 = tb[off + kk * 32u + ty];
      let c1 = tb[off + kk * 32u + 16u + ty];
      acc[0] = fma(vec4<f32>(a0.x), c0, acc[0]);
      acc[1] = fma(vec4<f32>(a0.x), c1, acc[1]);
      acc[2] = fma(vec4<f32>(a0.y), c0, acc[2]);
      acc[3] = fma(vec4<f32>(a0.y), c1, acc[3]);
      acc[4] = fma(vec4<f32>(a0.z), c0, acc[4]);
      acc[5] = fma(vec4<f32>(a0.z), c1, acc[5]);
      acc[6] = fma(vec4<f32>(a0.w), c0, acc[6]);
      acc[7] = fma(vec4<f32>(a0.w), c1, acc[7]);
      acc[8] = fma(vec4<f32>(a1.x), c0, acc[8]);
      acc[9] = fma(vec4<f32>(a1.x), c1, acc[9]);
      acc[10] = fma(vec4<f32>(a1.y), c0, acc[10]);
      acc[11] = fma(vec4<f32>(a1.y), c1, acc[11]);
      acc[12] = fma(vec4<f32>(a1.z), c0, acc[12]);
      acc[13] = fma(vec4<f32>(a1.z), c1, acc[13]);
      acc[14] = fma(vec4<f32>(a1.w), c0, acc[14]);
      acc[15] = fma(vec4<f32>(a1.w), c1, acc[15]);
#else
      // NARROW and SLIM: one vector of 4 columns, for 8 rows (NARROW) or 4 (SLIM)
#if NARROW
      let a1 = ta[off + kk * 32u + 16u + tx];
#endif
      let c0 = tb[(off / SLICE) * SLICEB + kk * (TN / 4u) + ty];
      acc[0] = fma(vec4<f32>(a0.x), c0, acc[0]);
      acc[1] = fma(vec4<f32>(a0.y), c0, acc[1]);
      acc[2] = fma(vec4<f32>(a0.z), c0, acc[2]);
      acc[3] = fma(vec4<f32>(a0.w), c0, acc[3]);
#if NARROW
      acc[4] = fma(vec4<f32>(a1.x), c0, acc[4]);
      acc[5] = fma(vec4<f32>(a1.y), c0, acc[5]);
      acc[6] = fma(vec4<f32>(a1.z), c0, acc[6]);
      acc[7] = fma(vec4<f32>(a1.w), c0, acc[7]);
#endif
#endif
    }
