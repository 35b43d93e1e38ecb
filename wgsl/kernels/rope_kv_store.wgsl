// The epilogue of the mat-vecs that compute llama's Q, K and V projections with the ROPEs
// of Q and K and the K and V stores after them (ROPE_KV: the integer mat-vec's MULTI form,
// mul_mat_vec_q4.wgsl, and the vectorised one's, mul_mat_multi.wgsl): a workgroup's rows
// i0 and i0 + 1, y, of product prod are a pair of Q or K, rotated as ROPE's NORMAL mode
// rotates it (rope_math.wgsl: pair slot (i0 mod p.HeadD) / 2 of token 0) and stored into
// dst (ROPE Q's result) or into row kidx[0] of the K cache kdst (strides p.Db.xy, p.Db.z
// rows), or two elements of V stored into row vidx[0] of the V cache vdst (p.Dc likewise).
// ROLE_Q, ROLE_K and ROLE_V name the products.
fn rope_kv_store(prod: u32, i0: u32, y: vec2<f32>) {
  if (prod == {{ROLE_V}}u) {
    let row = u32(vidx_geti(0u));
    if (row < p.Dc.z) {
      vdst_set(i0 * p.Dc.x + row * p.Dc.y, y.x);
      vdst_set((i0 + 1u) * p.Dc.x + row * p.Dc.y, y.y);
    }
    return;
  }
  let r = rope_rotate(RopeSlot(vec2<u32>(0u), vec2<u32>(0u), (i0 % p.HeadD) / 2u, 0u), y);
  if (prod == {{ROLE_Q}}u) {
    dst_set(i0, r.x);
    dst_set(i0 + 1u, r.y);
    return;
  }
  let row = u32(kidx_geti(0u));
  if (row < p.Db.z) {
    kdst_set(i0 * p.Db.x + row * p.Db.y, r.x);
    kdst_set((i0 + 1u) * p.Db.x + row * p.Db.y, r.y);
  }
}
