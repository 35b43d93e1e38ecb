// The first step of the prompt MUL_MAT on quantized weights (ops/mul_mat_dequant.go):
// rows Row0 .. Row0 + M - 1 of every src0 matrix, dequantized by the format's one routine
// (src0_get8), into `chunk`, F16 [K, M, src0 ne2, src0 ne3] contiguous, which
// mul_mat_big then reads as its src0. Each invocation converts PER 8-element groups,
// consecutive invocations consecutive groups (workgroups cover PER x 256 groups, so the
// IQ formats fill their workgroup tables once per that many).

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  formats_init(lid); // tables of quantized formats
  let gpr = p.K / 8u; // groups per row
  let n02 = p.Ne2 / p.R2; // src0 matrices along dims 2, 3
  let n03 = p.Batches / p.Ne2 / p.R3;
  let total = gpr * p.M * n02 * n03;
  let first = group_id(wid, nwg) * {{PER}}u * 256u + lid;
  for (var t = 0u; t < {{PER}}u; t = t + 1u) {
    let idx = first + t * 256u;
    if (idx < total) {
      let g = idx % gpr;
      let rest = idx / gpr;
      let r = rest % p.M;
      let m = rest / p.M;
      let src = (p.Row0 + r) * p.A.y + (m % n02) * p.A.z + (m / n02) * p.A.w + 8u * g;
      chunk_set8(8u * idx, src0_get8(src));
    }
  }
}
