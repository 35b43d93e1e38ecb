// ROPE of K stored straight into the rows of a KV cache (SET_ROWS), and with V_STORE the
// rows of V into their cache: p.N invocations, the first p.KN one pair slot of K each
// (rope_math.wgsl), the others one element of V each. The roped K is contiguous, so a
// value's offset under p.D is its index in the rows of p.K.x elements SET_ROWS reads. An
// index outside the cache (negative or >= its rows) stores nothing. With Q_ROPE the
// invocations from p.QAt on rotate one pair slot of Q each (the same rotation; Q has p.QHeads
// heads and K's other dimensions, its source qsrc strides p.QA, its result qdst is
// contiguous and may be qsrc itself).
#include rope_math

// Stores element e (row-major index over rows of p.K.x) of the roped K.
fn k_store(e: u32, v: f32) {
  let r = e / p.K.x;
  let row = u32(kidx_geti(r * p.K.y));
  if (row >= p.KRows) { return; }
  kdst_set((e - r * p.K.x) * p.K.z + row * p.K.w, v);
}

fn element(i: u32) {
#if Q_ROPE
  if (i >= p.QAt) {
    let ne = vec4<u32>(p.Ne.x, p.QHeads, p.Ne.z, p.Ne.w);
    let s = rope_slot(i - p.QAt, ne, p.QA, vec4<u32>(1u, ne.x, ne.x * ne.y, ne.x * ne.y * ne.z));
    let v = rope_rotate(s, vec2<f32>(qsrc_get(s.src.x), qsrc_get(s.src.y)));
    qdst_set(s.dst.x, v.x);
    qdst_set(s.dst.y, v.y);
    return;
  }
#endif
  if (i < p.KN) {
    let r = rope_pair(i);
    k_store(r.at.x, r.v.x);
    k_store(r.at.y, r.v.y);
    return;
  }
#if V_STORE
  let j = i - p.KN;
  let r = j / p.V.x;
  let c = j - r * p.V.x;
  let row = u32(vidx_geti(r * p.V.w));
  if (row >= p.VRows) { return; }
  vdst_set(c * p.VD.x + row * p.VD.y, vsrc_get(c * p.V.y + r * p.V.z));
#endif
}

#include elementwise
