// mul_mat_big2: writes the registers of mul_mat_big_fetch to the slice buffer at vec4
// offset off, K-major: element e of a chunk of tile row r goes to slice row lc + e.
#if HALF
    if (is_a) {
      for (var e = 0u; e < 8u; e = e + 1u) {
        ta[off + e * 32u + lr / 4u][lr % 4u] = w[e / 4u][e % 4u];
      }
    } else {
      for (var e = 0u; e < 8u; e = e + 1u) {
        tb[off + e * 32u + lr / 4u][lr % 4u] = w[e / 4u][e % 4u];
      }
    }
#else
    for (var j = 0u; j < {{PER}}u; j = j + 1u) {
      let r = lr + j * {{RS}}u;
      for (var e = 0u; e < 8u; e = e + 1u) {
        ta[off + (lc + e) * 32u + r / 4u][r % 4u] = wa[j][e / 4u][e % 4u];
        tb[off + (lc + e) * 32u + r / 4u][r % 4u] = wb[j][e / 4u][e % 4u];
      }
    }
#endif
