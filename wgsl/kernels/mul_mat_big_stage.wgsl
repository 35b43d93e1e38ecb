// mul_mat_big: writes the registers of mul_mat_big_fetch to the slice buffer at vec4
// offset off, K-major: element e of tile row lr's chunk goes to slice row e (with RAW_A,
// src0's F16 words in wr are turned into floats first).
    if (is_a) {
#if RAW_A
      w = half8(wr);
#endif
      for (var e = 0u; e < 8u; e = e + 1u) {
        ta[off + e * 32u + lr / 4u][lr % 4u] = w[e / 4u][e % 4u];
      }
    } else if (lr < TN) {
      let offb = (off / SLICE) * SLICEB;
      for (var e = 0u; e < 8u; e = e + 1u) {
        tb[offb + e * (TN / 4u) + lr / 4u][lr % 4u] = w[e / 4u][e % 4u];
      }
    }
