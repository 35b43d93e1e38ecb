// dst = the inclusive prefix sums of each row of src0, one workgroup per row: the row is
// scanned {{WG}} elements at a time (a Hillis-Steele scan in shared memory), each chunk
// offset by the total of the chunks before it.
var<workgroup> part: array<f32, {{WG}}>;

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = group_id(wid, nwg);
  if (row >= p.Rows) { return; }
  let c = row_coords(row, p.Ne);
  let a = offset4(c, p.A);
  let d = offset4(c, p.D);
  var carry = 0.0;
  for (var j0 = 0u; j0 < p.Ne.x; j0 = j0 + {{WG}}u) {
    let j = j0 + lid;
    var v = 0.0;
    if (j < p.Ne.x) { v = src0_get(a + j * p.A.x); }
    part[lid] = v;
    workgroupBarrier();
    for (var s = 1u; s < {{WG}}u; s = s * 2u) {
      var add = 0.0;
      if (lid >= s) { add = part[lid - s]; }
      workgroupBarrier();
      part[lid] = part[lid] + add;
      workgroupBarrier();
    }
    if (j < p.Ne.x) { dst_set(d + j * p.D.x, carry + part[lid]); }
    carry = carry + part[{{WG}}u - 1u];
    workgroupBarrier();
  }
}
