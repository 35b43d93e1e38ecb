// Rows of a state held LANES invocations a row (ROWS rows a workgroup of {{WG}}): each
// invocation holds elements lane + LANES e (e < ELEMS) of row lid / LANES in registers.
// The recurrent kernels (gated_delta_net, ssm_scan) include it.
const LANES = {{LANES}}u;
const ELEMS = {{ELEMS}}u;
const ROWS = {{WG}}u / LANES;

var<workgroup> lanes_red: array<vec4<f32>, {{WG}}>;

// lanes_sum returns the sums of v over the LANES invocations of lid's row, to each of
// them. Every invocation of the workgroup calls it (it holds barriers).
fn lanes_sum(lid: u32, v: vec4<f32>) -> vec4<f32> {
  let lane = lid % LANES;
  lanes_red[lid] = v;
  workgroupBarrier();
  for (var s = LANES / 2u; s > 0u; s = s / 2u) {
    if (lane < s) { lanes_red[lid] = lanes_red[lid] + lanes_red[lid + s]; }
    workgroupBarrier();
  }
  let r = lanes_red[lid - lane];
  workgroupBarrier(); // every row's sum read before the next call writes
  return r;
}
