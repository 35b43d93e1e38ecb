// The K loop of the 64 x 64 tiled kernels (mul_mat, mul_mat_id): for each 32-wide K slice,
// invocation (lr, lc) stages elements lc..lc+7 of tile row lr of src0 (that row starting at
// element a_row) into ta and of src1 (b_row) into tb, eight at a time with VEC_A (VEC_B),
// else element by element, zero past p.K; then each invocation adds its 4 x 4 products
// (rows tx + 16 r, columns ty + 16 c) to acc. The including kernel declares TK, LD, ta, tb,
// tx, ty, lr, lc, a_row, b_row and acc.
  for (var k0 = 0u; k0 < p.K; k0 = k0 + TK) {
    let k = k0 + lc;
#if VEC_A
    var wa = mat2x4<f32>();
    if (k < p.K) { wa = src0_get8(a_row + k); }
    for (var c = 0u; c < 4u; c = c + 1u) {
      ta[lr * LD + lc + c] = wa[0][c];
      ta[lr * LD + lc + 4u + c] = wa[1][c];
    }
#else
    for (var c = 0u; c < 8u; c = c + 1u) {
      var va = 0.0;
      if (k + c < p.K) { va = src0_get(a_row + (k + c) * p.A.x); }
      ta[lr * LD + lc + c] = va;
    }
#endif
#if VEC_B
    var wb = mat2x4<f32>();
    if (k < p.K) { wb = src1_get8(b_row + k); }
    for (var c = 0u; c < 4u; c = c + 1u) {
      tb[lr * LD + lc + c] = wb[0][c];
      tb[lr * LD + lc + 4u + c] = wb[1][c];
    }
#else
    for (var c = 0u; c < 8u; c = c + 1u) {
      var vb = 0.0;
      if (k + c < p.K) { vb = src1_get(b_row + (k + c) * p.B.x); }
      tb[lr * LD + lc + c] = vb;
    }
#endif
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk = kk + 1u) {
      let a0 = ta[tx * LD + kk];
      let a1 = ta[(tx + 16u) * LD + kk];
      let a2 = ta[(tx + 32u) * LD + kk];
      let a3 = ta[(tx + 48u) * LD + kk];
      for (var c = 0u; c < 4u; c = c + 1u) {
        let bv = tb[(ty + 16u * c) * LD + kk];
        acc[c] = acc[c] + a0 * bv;
        acc[4u + c] = acc[4u + c] + a1 * bv;
        acc[8u + c] = acc[8u + c] + a2 * bv;
        acc[12u + c] = acc[12u + c] + a3 * bv;
      }
    }
    workgroupBarrier();
  }
