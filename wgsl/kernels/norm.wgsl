// RMS_NORM / NORM / L2_NORM over each row of src0; one workgroup per row. With MUL, the
// result is multiplied by w (repeated over the rows, like a binary MUL) before it is
// stored; with SCALE, then scaled by p.Sc.x and offset by p.Sc.y (a SCALE after the norm).
// With ADD, the normalised row is the sum src0 + src1 (src1 repeated over the rows,
// like a binary ADD), which is stored to added too. Element j of every operand is read and
// written by one invocation only, its reads before its writes, so dst may alias src0 and
// added the sources (or dst added) at the same layout; w must not overlap added, which is
// written before the loop form reads w.
//
// Two forms:
//   - REG (rows of at most {{WG}} * {{E}} elements): each invocation holds elements
//     lid + k * {{WG}} (k < {{E}}) of the row in registers. It issues every load of the
//     row and of the weight up front, independent of each other (indices past the row are
//     clamped to its last element and their values dropped), so a dispatch waits for
//     memory once; then it stores the sum (ADD), reduces (two barriers a reduction) and
//     stores the result. No store precedes a load, so no load waits for a store that
//     might alias it.
//     With XQ it also quantizes the result for the integer mat-vec after it (see below),
//     which then needs no dispatch of its own for that.
//   - otherwise each invocation loops over its elements: a first pass stores the sum
//     (ADD), a pass reduces, and a last pass reads the row back and stores the result.

#if XQ
// The column of the integer mat-vec's XQ form (mul_mat_vec_q4_quant.wgsl), stored besides
// the result for the products that read it (the fusion rows add+norm+mul+gate and
// add+norm+mul+qkv): the REG form only, rows of whole groups of the products' weights'
// layout (HALF, WPG).
const HALF = {{HALF}}u;
const WPG = {{WPG}}u; // quant words per group
const GROUP = 8u * WPG; // elements per group

#include mul_mat_vec_q4_quant
#include mul_mat_vec_xq_store
#endif

// The second round of row_sum: one partial sum per group of {{WG}} / {{NG}} invocations.
var<workgroup> red_part: array<f32, {{NG}}>;

// row_sum returns the sum of v over the workgroup in two rounds: {{NG}} invocations each
// add up {{WG}} / {{NG}} values (lid, lid + {{NG}}, ...: consecutive invocations read
// consecutive words), then every invocation adds up the {{NG}} partial sums. Two
// barriers; back-to-back calls are safe (every read of a round's array precedes the
// barrier that the next write of it follows).
fn row_sum(lid: u32, v: f32) -> f32 {
  wg_red[lid] = v;
  workgroupBarrier();
  if (lid < {{NG}}u) {
    var s = 0.0;
    for (var i = 0u; i < {{WG}}u / {{NG}}u; i = i + 1u) { s = s + wg_red[lid + i * {{NG}}u]; }
    red_part[lid] = s;
  }
  workgroupBarrier();
  var r = 0.0;
  for (var i = 0u; i < {{NG}}u; i = i + 1u) { r = r + red_part[i]; }
  return r;
}

// The scale of the normalised row from the reduced sum of squares.
fn norm_scale(sq: f32, n: f32) -> f32 {
#if L2
  return 1.0 / max(sqrt(sq), p.Eps);
#else
  return 1.0 / sqrt(sq / n + p.Eps);
#endif
}

#if REG
@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = group_id(wid, nwg);
  if (row >= p.Rows) { return; }
  let c = row_coords(row, p.Ne);
  let a = offset4(c, p.A);
  let d = offset4(c, p.D);
  let n = f32(p.Ne.x);
  let last = p.Ne.x - 1u;
  var x: array<f32, {{E}}>;
#if ADD
  let s = offset4(c, p.S);
  let b = offset4(c % p.Be, p.B);
#for K {{E}}
  x[{{K}}] = src0_get(s + min(lid + {{K}}u * {{WG}}u, last) * p.S.x) + src1_get(b + (min(lid + {{K}}u * {{WG}}u, last) % p.Be.x) * p.B.x);
#endfor
#else
#for K {{E}}
  x[{{K}}] = src0_get(a + min(lid + {{K}}u * {{WG}}u, last) * p.A.x);
#endfor
#endif
#if MUL
  let wrow = offset4(c % p.We, p.W);
  var w: array<f32, {{E}}>;
#for K {{E}}
  w[{{K}}] = w_get(wrow + (min(lid + {{K}}u * {{WG}}u, last) % p.We.x) * p.W.x);
#endfor
#endif
  // the elements past the row count as zeros
#for K {{E}}
  x[{{K}}] = select(0.0, x[{{K}}], lid + {{K}}u * {{WG}}u < p.Ne.x);
#endfor
#if ADD
#for K {{E}}
  if (lid + {{K}}u * {{WG}}u < p.Ne.x) { added_set(a + (lid + {{K}}u * {{WG}}u) * p.A.x, x[{{K}}]); }
#endfor
#endif
#if L2
#else
#if RMS
#else
  var sum = 0.0;
#for K {{E}}
  sum = sum + x[{{K}}];
#endfor
  let mean = row_sum(lid, sum) / n;
#for K {{E}}
  x[{{K}}] = select(0.0, x[{{K}}] - mean, lid + {{K}}u * {{WG}}u < p.Ne.x);
#endfor
#endif
#endif
  var sq = 0.0;
#for K {{E}}
  sq = sq + x[{{K}}] * x[{{K}}];
#endfor
  let scale = norm_scale(row_sum(lid, sq), n);
#for K {{E}}
  {
#if MUL
    var y = x[{{K}}] * scale * w[{{K}}];
#else
    var y = x[{{K}}] * scale;
#endif
#if SCALE
    y = y * p.Sc.x + p.Sc.y;
#endif
    if (lid + {{K}}u * {{WG}}u < p.Ne.x) {
      dst_set(d + (lid + {{K}}u * {{WG}}u) * p.D.x, y);
#if XQ
      xq_row[lid + {{K}}u * {{WG}}u] = y;
#endif
    }
  }
#endfor
#if XQ
  // The result quantized as the integer mat-vec after the norm reads its column (row: the
  // column's index), from workgroup memory (xq_row, in mul_mat_vec_xq_store.wgsl).
  workgroupBarrier();
  xq_store_row(lid, row, p.Ne.x);
#endif
}
#else
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
  var v = y * w_get(wrow + (j % p.We.x) * p.W.x);
#else
  var v = y;
#endif
#if SCALE
  v = v * p.Sc.x + p.Sc.y;
#endif
  dst_set(d + j * p.D.x, v);
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
  let scale = norm_scale(row_sum(lid, sq), n);
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { store(d, j, wrow, row_get(a, j) * scale); }
#else
#if RMS
  var sq = 0.0;
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { let x = row_get(a, j); sq = sq + x * x; }
  let scale = norm_scale(row_sum(lid, sq), n);
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { store(d, j, wrow, row_get(a, j) * scale); }
#else
  var sum = 0.0;
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { sum = sum + row_get(a, j); }
  let mean = row_sum(lid, sum) / n;
  var sq = 0.0;
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { let x = row_get(a, j) - mean; sq = sq + x * x; }
  let scale = norm_scale(row_sum(lid, sq), n);
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { store(d, j, wrow, (row_get(a, j) - mean) * scale); }
#endif
#endif
}
#endif
