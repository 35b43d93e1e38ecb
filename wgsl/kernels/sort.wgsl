// Sorts the indices of each row of src0 by value (descending with DESC), one workgroup per
// row, with a bitonic network over NP (the row length rounded up to a power of two)
// indices in workgroup memory; values are read from src0 at each comparison. Indices past
// the row are padding that sorts after every real one. Equal values keep index order.
// Writes the first p.Out sorted indices of the row.
const NP = {{NP}}u;
var<workgroup> order: array<u32, {{NP}}>;

// precedes reports whether index x comes before index y in the sorted row at a.
fn precedes(a: u32, x: u32, y: u32) -> bool {
  let n = p.Ne.x;
  if (x >= n || y >= n) { return x < y; }
  let vx = src0_get(a + x * p.A.x);
  let vy = src0_get(a + y * p.A.x);
#if DESC
  return vx > vy || (vx == vy && x < y);
#else
  return vx < vy || (vx == vy && x < y);
#endif
}

#include bitonic

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = group_id(wid, nwg);
  if (row >= p.Rows) { return; }
  let c = row_coords(row, p.Ne);
  let a = offset4(c, p.A);
  let d = offset4(c, p.D);
  for (var i = lid; i < NP; i = i + {{WG}}u) { order[i] = i; }
  workgroupBarrier();
  bitonic(lid, a);
  for (var i = lid; i < p.Out; i = i + {{WG}}u) { dst_seti(d + i * p.D.x, i32(order[i])); }
}
