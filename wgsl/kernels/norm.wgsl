// RMS_NORM / NORM / L2_NORM over each row of src0; one workgroup per row. Every pass reads element j
// before the same invocation writes element j, so dst may alias src0. With MUL, the result
// is multiplied by w (repeated over the rows, like a binary MUL) before it is stored.
// With ADD, the normalised row is the sum src0 + src1 (src1 repeated over the rows, like a
// binary ADD): a first pass stores it to added, and the norm's passes read it back there.
// Element j of every operand is touched by one invocation only, sources read before added
// and dst are written, so added and dst may alias the sources (or each other) at the same
// layout; w must not overlap added, which is written before w is read.

// row_get returns element j of the normalised row that starts at a (strides p.A).
fn row_get(a: u32, j: u32) -> f32 {
#if ADD
  return added_get(a + j * p.A.x);
#else
  return src0_get(a + j * p.A.x);
#endif
}

fn store(d: u32, j: u32, wrow: u32, y: f32) {
#if MUL
  dst_set(d + j * p.D.x, y * w_get(wrow + (j % p.We.x) * p.W.x));
#else
  dst_set(d + j * p.D.x, y);
#endif
}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = group_id(wid, nwg);
  if (row >= p.Rows) { return; }
  let c = row_coords(row, p.Ne);
  let a = offset4(c, p.A);
  let d = offset4(c, p.D);
  let n = f32(p.Ne.x);
  var wrow = 0u;
#if MUL
  wrow = offset4(c % p.We, p.W);
#endif
#if ADD
  let s = offset4(c, p.S);
  let b = offset4(c % p.Be, p.B);
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) {
    added_set(a + j * p.A.x, src0_get(s + j * p.S.x) + src1_get(b + (j % p.Be.x) * p.B.x));
  }
#endif
#if L2
  var sq = 0.0;
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { let x = row_get(a, j); sq = sq + x * x; }
  let scale = 1.0 / max(sqrt(wg_sum(lid, sq)), p.Eps);
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { store(d, j, wrow, row_get(a, j) * scale); }
#else
#if RMS
  var sq = 0.0;
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { let x = row_get(a, j); sq = sq + x * x; }
  let scale = 1.0 / sqrt(wg_sum(lid, sq) / n + p.Eps);
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { store(d, j, wrow, row_get(a, j) * scale); }
#else
  var sum = 0.0;
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { sum = sum + row_get(a, j); }
  let mean = wg_sum(lid, sum) / n;
  var sq = 0.0;
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { let x = row_get(a, j) - mean; sq = sq + x * x; }
  let scale = 1.0 / sqrt(wg_sum(lid, sq) / n + p.Eps);
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { store(d, j, wrow, (row_get(a, j) - mean) * scale); }
#endif
#endif
}
