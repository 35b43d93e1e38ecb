// The softmax of a row, for the kernels that include it (soft_max.wgsl, moe_router.wgsl):
// each element's logit, the row's largest and the sum of their exponentials, taken by the
// workgroup's invocations in one order, so that every such kernel computes the same
// values. The kernel's parameters hold A (src0's strides) and Scale; with MASK it binds
// mask.

// logit returns element j of the row at a, scaled and masked (mask row at m). With
// SHARED_ROW the including kernel has stored the row's scaled logits in the workgroup
// array row (a, m and slope unused).
fn logit(a: u32, m: u32, j: u32, slope: f32) -> f32 {
#if SHARED_ROW
  return row[j];
#else
  var v = src0_get(a + j * p.A.x) * p.Scale;
#if MASK
  v = v + slope * mask_get(m + j);
#endif
  return v;
#endif
}

// row_max returns the largest logit of the n elements of the row at a.
fn row_max(lid: u32, n: u32, a: u32, m: u32, slope: f32) -> f32 {
  var mx = bitcast<f32>(0xff800000u); // -Inf
  for (var j = lid; j < n; j = j + {{WG}}u) { mx = max(mx, logit(a, m, j, slope)); }
  return wg_max(lid, mx);
}

// row_sum returns the sum of exp(logit - mx) over the n elements of the row at a.
fn row_sum(lid: u32, n: u32, a: u32, m: u32, slope: f32, mx: f32) -> f32 {
  var sum = 0.0;
  for (var j = lid; j < n; j = j + {{WG}}u) { sum = sum + exp(logit(a, m, j, slope) - mx); }
  return wg_sum(lid, sum);
}
