// The entry point of element-wise kernels: one invocation per element, p.N elements;
// the including kernel defines element(i) for linear element index i.
@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  formats_init(lid); // tables of quantized formats (get_rows)
  let i = linear_id(wid, nwg, lid, {{WG}}u);
  if (i < p.N) { element(i); }
}
